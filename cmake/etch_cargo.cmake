# Build-time step of the etch Zephyr module (cmake -DARGS=<cargo-args.cmake>
# -P etch_cargo.cmake): resolves the kernel selection and runs cargo on
# rust/etch-ffi. Inputs come from the file cmake/etch.cmake writes at
# configure time.
#
# Selection = `etch select <model> --format cargo` (when the model is used)
#           + CONFIG_ETCH_OPS (namespace::name.overload -> op-namespace-name-overload,
#             the mapping of etch select)
#           + CONFIG_ETCH_DTYPES (f32 i8 ... -> dtype-f32 ...)
# No operator at all -> all-ops; no element type -> all-dtypes.

include(${ARGS})

set(ops "")
set(dtypes "")

if(ETCH_MODEL AND ETCH_OPS_FROM_MODEL)
  execute_process(
    COMMAND ${ETCH_CLI} select ${ETCH_MODEL} --format cargo
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "etch: `etch select ${ETCH_MODEL}` failed:\n${err}")
  endif()
  # features = ["op-...", "dtype-..."]
  string(REGEX MATCHALL "\"[^\"]+\"" quoted "${out}")
  foreach(q ${quoted})
    string(REPLACE "\"" "" f ${q})
    if(f MATCHES "^op-")
      list(APPEND ops ${f})
    elseif(f MATCHES "^dtype-")
      list(APPEND dtypes ${f})
    endif()
  endforeach()
endif()

# The feature names etch-ffi has, to name unknown operators clearly.
file(READ ${ETCH_MANIFEST} manifest)

string(REGEX REPLACE "[ ,\t\n]+" ";" extra_ops "${ETCH_OPS}")
foreach(op ${extra_ops})
  if(op STREQUAL "")
    continue()
  endif()
  if(op MATCHES "^op-")
    set(f ${op})
  else()
    # etch select's op_feature(): ns::name.overload -> op-ns-name-overload
    string(FIND "${op}" "::" sep)
    if(sep LESS 0)
      set(ns "")
      set(rest "${op}")
    else()
      string(SUBSTRING "${op}" 0 ${sep} ns)
      math(EXPR after "${sep} + 2")
      string(SUBSTRING "${op}" ${after} -1 rest)
    endif()
    string(FIND "${rest}" "." dot)
    if(dot LESS 0)
      set(name "${rest}")
      set(overload "")
    else()
      string(SUBSTRING "${rest}" 0 ${dot} name)
      math(EXPR after "${dot} + 1")
      string(SUBSTRING "${rest}" ${after} -1 overload)
    endif()
    set(f "op-${ns}-${name}-${overload}")
  endif()
  string(FIND "${manifest}" "\n${f} = " found)
  if(found LESS 0)
    message(FATAL_ERROR "etch: CONFIG_ETCH_OPS: etch has no kernel for '${op}' "
      "(cargo feature ${f}); `etch select --format list <model>` prints valid names")
  endif()
  list(APPEND ops ${f})
endforeach()

string(REGEX REPLACE "[ ,\t\n]+" ";" extra_dtypes "${ETCH_DTYPES}")
foreach(t ${extra_dtypes})
  if(t STREQUAL "")
    continue()
  endif()
  if(NOT t MATCHES "^dtype-")
    set(t dtype-${t})
  endif()
  string(FIND "${manifest}" "\n${t} = " found)
  if(found LESS 0)
    message(FATAL_ERROR "etch: CONFIG_ETCH_DTYPES: unknown element type '${t}' "
      "(f32 i8 u8 i16 i32 i64)")
  endif()
  list(APPEND dtypes ${t})
endforeach()

list(REMOVE_DUPLICATES ops)
list(REMOVE_DUPLICATES dtypes)
list(LENGTH ops nops)
if(nops EQUAL 0)
  set(ops all-ops)
endif()
if(NOT dtypes)
  set(dtypes all-dtypes)
endif()

# One kernel per operator feature: say clearly what a too-small registry
# needs before cargo's build script refuses it.
if(nops GREATER 0 AND ETCH_REGISTRY_SIZE GREATER 0 AND ETCH_REGISTRY_SIZE LESS nops)
  message(FATAL_ERROR
    "etch: CONFIG_ETCH_KERNEL_REGISTRY_SIZE=${ETCH_REGISTRY_SIZE} is too small: "
    "the selection has ${nops} kernels. Set CONFIG_ETCH_KERNEL_REGISTRY_SIZE=${nops} "
    "(or 0 = exactly the selection).\nSelected: ${ops}")
endif()

set(features ${ETCH_BASE_FEATURES} ${ops} ${dtypes})
string(REPLACE ";" "," features_csv "${features}")
string(REPLACE ";" "\n" features_lines "${features}")
file(WRITE ${ETCH_FEATURES_OUT} "${features_lines}\n")
message(STATUS "etch: ${ETCH_TRIPLE}, ${nops} kernels; features: ${features_csv}")

# CONFIG_ETCH_CARGO_OFFLINE: no network, exactly the locked versions.
set(offline "")
if(ETCH_OFFLINE_ARGS)
  set(offline ${ETCH_OFFLINE_ARGS} --locked)
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env
    "RUSTFLAGS=${ETCH_RUSTFLAGS}"
    "ETCH_KERNEL_REGISTRY_SIZE=${ETCH_REGISTRY_SIZE}"
    "CARGO_TARGET_DIR=${ETCH_TARGET_DIR}"
    ${ETCH_CARGO} build --release ${offline}
      --manifest-path ${ETCH_MANIFEST}
      --target ${ETCH_TRIPLE}
      --no-default-features --features ${features_csv}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  if(ETCH_OFFLINE_ARGS)
    message(FATAL_ERROR "etch: cargo build of rust/etch-ffi failed (see above). "
      "CONFIG_ETCH_CARGO_OFFLINE builds without the network: fetch the crates once "
      "after `west update` (docs/zephyr.md, 'Offline builds'):\n"
      "  cargo fetch --locked --manifest-path ${ETCH_MANIFEST}\n"
      "  cargo fetch --locked --manifest-path ${ETCH_MANIFEST}/../../../Cargo.toml")
  endif()
  message(FATAL_ERROR "etch: cargo build of rust/etch-ffi failed (see above)")
endif()
# Ninja compares the library with its inputs: mark it current even when cargo
# found nothing to rebuild.
file(TOUCH ${ETCH_LIB})
