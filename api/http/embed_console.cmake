# Run by CMake in script mode (cmake -P) at build time: writes OUT, a C++
# source that holds every file of the web console (api/http/console/) as a
# byte array, so that the server serves it from memory and a fresh install
# needs neither the files nor Node at run time (console_assets.h).
#   cmake -DOUT=<file.cc> -DDIR=<api/http/console> -P embed_console.cmake
# The file list is DIR's files, sorted, so the output is the same on every
# machine; api/CMakeLists.txt lists the same files as the step's dependencies.
file(GLOB _files RELATIVE ${DIR} ${DIR}/*)
list(SORT _files)
set(_arrays "")
set(_table "")
set(_i 0)
foreach(_name ${_files})
  if(IS_DIRECTORY ${DIR}/${_name})
    message(FATAL_ERROR "embed_console: ${DIR}/${_name}: the console is one flat folder")
  endif()
  file(READ ${DIR}/${_name} _hex HEX)
  string(LENGTH "${_hex}" _len)
  if(_len EQUAL 0)
    message(FATAL_ERROR "embed_console: ${DIR}/${_name} is empty")
  endif()
  math(EXPR _bytes "${_len} / 2")
  # Two hex digits a byte, 16 bytes a line (CMake's regex has no {n}).
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _hex "${_hex}")
  string(REPEAT "0x[0-9a-f][0-9a-f]," 16 _line)
  string(REGEX REPLACE "(${_line})" "\\1\n    " _hex "${_hex}")
  string(APPEND _arrays "// ${_name}\nconst unsigned char kFile${_i}[] = {\n    ${_hex}};\n")
  string(APPEND _table "    {\"${_name}\", kFile${_i}, ${_bytes}},\n")
  math(EXPR _i "${_i} + 1")
endforeach()
set(_out "// Generated at build time by api/http/embed_console.cmake from api/http/console/.\n")
string(APPEND _out "// Do not edit: change the files there.\n")
string(APPEND _out "#include \"api/http/console_assets.h\"\n\nnamespace neodb::api {\nnamespace {\n\n")
string(APPEND _out "${_arrays}\n}  // namespace\n\n")
string(APPEND _out "const ConsoleFile kConsoleFiles[] = {\n${_table}};\n")
string(APPEND _out "const size_t kConsoleFileCount = ${_i};\n\n}  // namespace neodb::api\n")
file(WRITE ${OUT} "${_out}")
