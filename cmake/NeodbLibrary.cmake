# neodb_library(<room> [STATIC | INTERFACE] [SOURCES src...] [PUBLIC lib...] [PRIVATE lib...])
# A room's library, made the one way every room's is (STYLE.md, "CMake"): the
# target neodb_<room> with its alias neodb::<room>, the source tree as its
# public include directory (code includes "<room>/<file>.h"), its links, and
# our per-target flags (neodb_target_defaults). Anything particular to a room
# (private include directories, compile definitions, per-file properties)
# follows the call in that room's CMakeLists.txt.
#   STATIC     a static library whatever BUILD_SHARED_LIBS says.
#   INTERFACE  a header-only library: no sources, no flags of its own; its
#              include directory and PUBLIC links reach whoever links it.
function(neodb_library room)
  cmake_parse_arguments(ARG "STATIC;INTERFACE" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  set(target neodb_${room})
  if(ARG_INTERFACE)
    add_library(${target} INTERFACE)
    add_library(neodb::${room} ALIAS ${target})
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} INTERFACE ${ARG_PUBLIC})
    return()
  endif()
  if(ARG_STATIC)
    add_library(${target} STATIC ${ARG_SOURCES})
  else()
    add_library(${target} ${ARG_SOURCES})
  endif()
  add_library(neodb::${room} ALIAS ${target})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC} PRIVATE ${ARG_PRIVATE})
  neodb_target_defaults(${target})
endfunction()
