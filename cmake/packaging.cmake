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
install(DIRECTORY DESTINATION /var/log/clusterws
        DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE)
pkg_get_variable(CLUSTERWS_UNIT_DIR systemd systemdsystemunitdir)
if(NOT CLUSTERWS_UNIT_DIR)
  set(CLUSTERWS_UNIT_DIR /lib/systemd/system)
endif()
install(FILES config/clusterwsd.service DESTINATION ${CLUSTERWS_UNIT_DIR})
# bash-completion loads a command's completion from a file of its name
set(completions ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES packaging/clusterctl.bash-completion DESTINATION ${completions} RENAME clusterctl)
foreach(tool IN LISTS CLUSTERWS_TOOLS)
  install(CODE "file(CREATE_LINK clusterctl
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${completions}/${tool}\" SYMBOLIC)")
endforeach()
install(FILES README.md docs/operations.md docs/configuration.md docs/cli.md docs/api.md
        docs/openapi.yaml docs/security.md docs/compatibility.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# -- man pages: help2man from each tool's --help plus docs/man/<name>.h2m --------------------
# help2man runs packaging/man-help under the tool's name, which puts the xCAT-style usage
# lines into the form it takes for a SYNOPSIS.
find_program(HELP2MAN help2man)
set(CLUSTERWS_MAN_PAGES)
function(cws_man_page name section target)
  set(out ${CMAKE_BINARY_DIR}/man/${name}.${section})
  set(link ${CMAKE_BINARY_DIR}/man/bin/${name})
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man/bin
    COMMAND ${CMAKE_COMMAND} -E create_symlink ${CMAKE_SOURCE_DIR}/packaging/man-help ${link}
    COMMAND ${CMAKE_COMMAND} -E env CLUSTERWS_BIN=${CMAKE_BINARY_DIR}/bin
            ${HELP2MAN} --no-info --section=${section} --version-string=${PROJECT_VERSION}
            --source=clusterws --include=${CMAKE_SOURCE_DIR}/docs/man/${name}.h2m
            --include=${CMAKE_SOURCE_DIR}/docs/man/common.h2m --output=${out} ${link}
    DEPENDS ${target} packaging/man-help docs/man/${name}.h2m docs/man/common.h2m
    COMMENT "man page ${name}(${section})" VERBATIM)
  install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} OPTIONAL)
  set(CLUSTERWS_MAN_PAGES ${CLUSTERWS_MAN_PAGES} ${out} PARENT_SCOPE)
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
set(CPACK_PACKAGE_CONTACT "clusterws maintainers <root@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "cluster management REST service and xCAT definition tools")
set(CPACK_PACKAGE_DESCRIPTION
    "clusterwsd serves the cluster's object database (nodes, groups, networks, osimages,\n"
    "policy) over HTTPS at /clusterws and /xcatws; lsdef, nodels, mkdef, chdef, rmdef, xdsh\n"
    "and the xCAT table tools work on the same store.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# init makes root's nodeshell key with ssh-keygen; the audit log is rotated by logrotate
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openssh-client, logrotate")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_SOURCE_DIR}/packaging/deb/conffiles ${CMAKE_SOURCE_DIR}/packaging/deb/postinst
    ${CMAKE_SOURCE_DIR}/packaging/deb/prerm ${CMAKE_SOURCE_DIR}/packaging/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)

add_custom_target(deb
  COMMAND cpack -G DEB --config ${CMAKE_BINARY_DIR}/CPackConfig.cmake
  DEPENDS clusterwsd clusterctl man
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR}
  COMMENT "Debian package in ${CMAKE_BINARY_DIR}/packages" VERBATIM)
