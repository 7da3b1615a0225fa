# Debian's libcaf-dev 0.17.6 ships no CMake package config: define CAF::core by hand.
find_package(Threads REQUIRED)
find_path(CAF_INCLUDE_DIR caf/all.hpp)
find_library(CAF_CORE_LIBRARY caf_core)
if(CAF_INCLUDE_DIR)
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_ver REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CAF_VERSION ([0-9]+)" "\\1" CAF_VERSION_INT "${_caf_ver}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF REQUIRED_VARS CAF_CORE_LIBRARY CAF_INCLUDE_DIR
                                  VERSION_VAR CAF_VERSION_INT)
if(CAF_VERSION_INT LESS 1706 OR CAF_VERSION_INT GREATER_EQUAL 1800)
  message(FATAL_ERROR "clusterws needs CAF 0.17.x (>= 0.17.6), found ${CAF_VERSION_INT}")
endif()
if(CAF_FOUND AND NOT TARGET CAF::core)
  add_library(CAF::core UNKNOWN IMPORTED)
  set_target_properties(CAF::core PROPERTIES
    IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
# CAF's network layer (BASP over TCP): the wire types' test between two actor systems.
find_library(CAF_IO_LIBRARY caf_io)
if(CAF_FOUND AND CAF_IO_LIBRARY AND NOT TARGET CAF::io)
  add_library(CAF::io UNKNOWN IMPORTED)
  set_target_properties(CAF::io PROPERTIES
    IMPORTED_LOCATION "${CAF_IO_LIBRARY}"
    INTERFACE_LINK_LIBRARIES CAF::core)
endif()
# CAF-to-CAF TLS (the service-node link, docs/service-nodes.md).
find_library(CAF_OPENSSL_LIBRARY caf_openssl)
if(CAF_FOUND AND CAF_OPENSSL_LIBRARY AND TARGET CAF::io AND NOT TARGET CAF::openssl)
  add_library(CAF::openssl UNKNOWN IMPORTED)
  set_target_properties(CAF::openssl PROPERTIES
    IMPORTED_LOCATION "${CAF_OPENSSL_LIBRARY}"
    INTERFACE_LINK_LIBRARIES "CAF::io;OpenSSL::SSL")
endif()
