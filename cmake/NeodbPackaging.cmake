# Install layout and the Debian package: `cpack -G DEB` in the build
# directory (or `cpack --config build/CPackConfig.cmake`) makes
# neodb_<version>_<arch>.deb with
#   /usr/bin/neodb
#   /usr/lib/neodb/libneodb_spm.so          (found as <exe>/../lib/neodb/)
#   /usr/share/neodb/default_model/         (found as <exe>/../share/neodb/)
#   /lib/systemd/system/neodb.service       (DynamicUser, data in /var/lib/neodb)
#   /etc/neodb/neodb.env                    (NEODB_OPTS for the unit; a conffile)
#   /lib/systemd/system/neodb-nats.service  (a cluster's nats-server, not enabled)
#   /etc/neodb/nats.conf                    (its configuration, to edit per machine)
install(TARGETS neodb RUNTIME DESTINATION bin)
if(TARGET neodb_spm)
  install(TARGETS neodb_spm LIBRARY DESTINATION lib/neodb)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/encoder/default_model/
        DESTINATION share/neodb/default_model)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/packaging/neodb.service DESTINATION /lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/packaging/neodb.env DESTINATION /etc/neodb)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/packaging/neodb-nats.service
        DESTINATION /lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/packaging/nats.conf DESTINATION /etc/neodb)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/neodb)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME neodb)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "vector search database with a built-in NeoBERT encoder (gRPC server and CLI)")
set(CPACK_PACKAGE_CONTACT "neodb maintainers <neodb@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION database)
# dpkg-shlibdeps derives Depends from the linked Debian libraries; it cannot
# with CUDA's libraries (not from a Debian package), so a CUDA build ships
# without Depends.
if(NEODB_WITH_CUDA)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
include(CPack)
