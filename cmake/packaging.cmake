# The install layout (FHS), the man pages and the Debian package (docs/operations.md).
# `cmake --install build` installs a head node's files; `make deb` (target deb) packages them.
# Nothing here is part of the default build: the man pages and the package are made only by
# the targets `man` and `deb`.

# A head node's service: installed under /usr unless told otherwise (-DCMAKE_INSTALL_PREFIX)
if(CMAKE_INSTALL_PREFIX_INITIALIZED_TO_DEFAULT)
  set(CMAKE_INSTALL_PREFIX /usr CACHE PATH "install prefix" FORCE)
endif()
include(GNUInstallDirs)

# -- files ------------------------------------------------------------------------------
# clusterwsd in /usr/sbin, the tools in /usr/bin; /etc, /var and the unit directory are the
# places the unit, the logrotate file and store::home::system() name, whatever the prefix.
install(TARGETS clusterwsd RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})
install(TARGETS clusterctl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(tool IN LISTS CLUSTERWS_TOOLS)
  install(FILES ${CMAKE_BINARY_DIR}/bin/${tool} DESTINATION ${CMAKE_INSTALL_BINDIR}) # symlinks
endforeach()
foreach(tool IN LISTS CLUSTERWS_ADMIN_TOOLS) # /usr/sbin/nodeset -> ../bin/clusterctl
  install(CODE "file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SBINDIR}\")
    file(CREATE_LINK ../${CMAKE_INSTALL_BINDIR}/clusterctl
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SBINDIR}/${tool}\" SYMBOLIC)")
endforeach()
install(FILES config/clusterws.conf DESTINATION /etc/clusterws)
# the default compute templates: /usr/share/clusterws/install/<platform>/ (api/template.hpp)
install(DIRECTORY share/install DESTINATION ${CMAKE_INSTALL_DATADIR}/clusterws)
install(FILES config/clusterws.logrotate DESTINATION /etc/logrotate.d RENAME clusterws)
# /var/log/clusterws (0750) is not a file of the package: postinst makes it (a 0750 directory
# in the archive is lintian's non-standard-dir-perm) and the unit's LogsDirectory= too
pkg_get_variable(CLUSTERWS_UNIT_DIR systemd systemdsystemunitdir)
if(NOT CLUSTERWS_UNIT_DIR)
  set(CLUSTERWS_UNIT_DIR /lib/systemd/system)
endif()
install(FILES config/clusterwsd.service DESTINATION ${CLUSTERWS_UNIT_DIR})
# bash-completion loads a command's completion from a file of its name
set(completions ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES packaging/clusterctl.bash-completion DESTINATION ${completions} RENAME clusterctl)
# rinstall too; not nodeset, whose name ClusterShell's completion owns
foreach(tool IN LISTS CLUSTERWS_TOOLS ITEMS rinstall)
  install(CODE "file(CREATE_LINK clusterctl
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${completions}/${tool}\" SYMBOLIC)")
endforeach()
# the Debian documentation every package carries: a DEP-5 copyright file and the changelog
# (native package: changelog.gz), compressed reproducibly (gzip -n) like the man pages
set(CLUSTERWS_DEB_DOCS ${CMAKE_BINARY_DIR}/deb-doc/changelog.gz)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/deb-doc/changelog.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/deb-doc
  COMMAND sh -c "gzip -9nc '${CMAKE_SOURCE_DIR}/packaging/deb/changelog' >'${CMAKE_BINARY_DIR}/deb-doc/changelog.gz'"
  DEPENDS packaging/deb/changelog COMMENT "changelog.gz" VERBATIM)
install(FILES ${CLUSTERWS_DEB_DOCS} OPTIONAL DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES packaging/deb/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES README.md docs/operations.md docs/configuration.md docs/cli.md docs/api.md
        docs/openapi.yaml docs/security.md docs/compatibility.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# -- man pages: help2man from each tool's --help plus docs/man/<name>.h2m --------------------
# help2man runs packaging/man-help under the tool's name, which puts the xCAT-style usage
# lines into the form it takes for a SYNOPSIS. Installed compressed (Debian policy 12.1;
# `gzip -9n`: no name or time stamp, so the package is reproducible).
find_program(HELP2MAN help2man)
set(CLUSTERWS_MAN_PAGES)
function(cws_man_page name section target)
  set(out ${CMAKE_BINARY_DIR}/man/${name}.${section})
  set(link ${CMAKE_BINARY_DIR}/man/bin/${name})
  add_custom_command(OUTPUT ${out}.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man/bin
    COMMAND ${CMAKE_COMMAND} -E create_symlink ${CMAKE_SOURCE_DIR}/packaging/man-help ${link}
    COMMAND ${CMAKE_COMMAND} -E env CLUSTERWS_BIN=${CMAKE_BINARY_DIR}/bin
            ${HELP2MAN} --no-info --section=${section} --version-string=${PROJECT_VERSION}
            --source=clusterws --include=${CMAKE_SOURCE_DIR}/docs/man/${name}.h2m
            --include=${CMAKE_SOURCE_DIR}/docs/man/common.h2m --output=${out} ${link}
    COMMAND gzip -9nf ${out}
    DEPENDS ${target} packaging/man-help docs/man/${name}.h2m docs/man/common.h2m
    COMMENT "man page ${name}(${section})" VERBATIM)
  install(FILES ${out}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} OPTIONAL)
  set(CLUSTERWS_MAN_PAGES ${CLUSTERWS_MAN_PAGES} ${out}.gz PARENT_SCOPE)
endfunction()
cws_man_page(clusterwsd 8 clusterwsd)
cws_man_page(clusterctl 8 clusterctl)
foreach(tool IN LISTS CLUSTERWS_TOOLS)
  cws_man_page(${tool} 1 clusterctl)
endforeach()
foreach(tool IN LISTS CLUSTERWS_ADMIN_TOOLS)
  cws_man_page(${tool} 8 clusterctl)
endforeach()
add_custom_target(man DEPENDS ${CLUSTERWS_MAN_PAGES})

# -- the Debian package -----------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME clusterws)
set(CPACK_PACKAGE_VENDOR clusterws)
# The Maintainer field: who answers for this build of the package (a site that builds its own
# sets -DCLUSTERWS_DEB_MAINTAINER="Name <address>"); the project's address by default.
set(CLUSTERWS_DEB_MAINTAINER
    "clusterws maintainers <maintainers@users.noreply.a-seed-2b260636.example>"
    CACHE STRING "the Maintainer field of the Debian package (Name <address>)")
set(CPACK_PACKAGE_CONTACT "${CLUSTERWS_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CLUSTERWS_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "cluster management REST service and xCAT definition tools")
# one string (a CMake list would put its ';' into the control file), lines under 80 columns;
# CPack puts the summary above it
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "clusterwsd serves the cluster's object database (nodes, groups, networks,
osimages, policy) over HTTPS at /clusterws and /xcatws; lsdef, nodels, mkdef,
chdef, rmdef, xdsh and the xCAT table tools work on the same store.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# the maintainer scripts call deb-systemd-helper and deb-systemd-invoke (as debhelper's
# dh_installsystemd does), from this version on
set(CPACK_DEBIAN_PACKAGE_DEPENDS "init-system-helpers (>= 1.54~)")
# init makes root's nodeshell key with ssh-keygen; the audit log is rotated by logrotate
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openssh-client, logrotate")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_SOURCE_DIR}/packaging/deb/conffiles ${CMAKE_SOURCE_DIR}/packaging/deb/postinst
    ${CMAKE_SOURCE_DIR}/packaging/deb/prerm ${CMAKE_SOURCE_DIR}/packaging/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)

add_custom_target(deb
  COMMAND cpack -G DEB --config ${CMAKE_BINARY_DIR}/CPackConfig.cmake
  DEPENDS clusterwsd clusterctl man ${CLUSTERWS_DEB_DOCS}
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR}
  COMMENT "Debian package in ${CMAKE_BINARY_DIR}/packages" VERBATIM)
