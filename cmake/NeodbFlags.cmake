# Per-target compile settings. Call neodb_target_defaults(<target>) on every
# target we own so that flags stay per target, never global.
add_library(neodb_flags INTERFACE)
target_compile_options(neodb_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter -Wno-sign-compare>)
if(NEODB_NATIVE)
  target_compile_options(neodb_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
endif()
if(NEODB_ENABLE_ASAN)
  target_compile_options(neodb_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(neodb_flags INTERFACE -fsanitize=address,undefined)
endif()

# Fuzz builds: coverage feedback for libFuzzer from every library of ours; the
# fuzz executables add -fsanitize=fuzzer (its main) themselves.
if(NEODB_FUZZ)
  target_compile_options(neodb_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
endif()

function(neodb_target_defaults target)
  target_link_libraries(${target} PRIVATE neodb_flags)
endfunction()
