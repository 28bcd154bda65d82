# CMake side of the etch Zephyr module (included by the top-level
# CMakeLists.txt when CONFIG_ETCH=y).
#
# What it does, all inside the Zephyr build folder (<build>/etch/):
#   1. derives the Rust target triple, `-C target-cpu` and the `dsp` feature
#      from Kconfig (etch_rust_target());
#   2. embeds CONFIG_ETCH_MODEL 16-byte aligned as etch_model_data /
#      etch_model_size (generated etch_model.h / etch_model.c);
#   3. builds the host `etch` CLI and, at build time, runs
#      `etch select <model> --format cargo` so the library holds exactly the
#      model's kernels (merged with CONFIG_ETCH_OPS / CONFIG_ETCH_DTYPES);
#   4. builds rust/etch-ffi with cargo (cmake/etch_cargo.cmake) and links the
#      static library, rebuilding when any Rust source, the model or the
#      configuration changes.
#
# Functions for applications (usable from an app's CMakeLists.txt after
# find_package(Zephyr)):
#   etch_embed(<target> <file> <name> [NPY] [SECTION <section>] [ALIGN <n>])
#     embeds <file> (with NPY: the data of a .npy file, header stripped) as
#     `const uint8_t <name>_data[]` (16-byte aligned unless ALIGN) and
#     `const size_t <name>_size`, declared with `#define <NAME>_SIZE` in a
#     generated <name>.h on the include path. The module embeds
#     CONFIG_ETCH_MODEL this way as etch_model (<etch_model.h>).

set(ETCH_DIR ${CMAKE_CURRENT_LIST_DIR}/.. CACHE INTERNAL "etch source tree")
get_filename_component(ETCH_DIR ${ETCH_DIR} ABSOLUTE)
set(ETCH_DIR ${ETCH_DIR} CACHE INTERNAL "etch source tree")

# --- Rust target from Kconfig ------------------------------------------------
# RISC-V: the float ABI must match Zephyr's -mabi (cmake/compiler/gcc/
# target_riscv.cmake: ilp32/lp64, "f" or "d" with CONFIG_FLOAT_HARD), the
# extensions its -march. Rust's riscv targets: riscv32i, riscv32im,
# riscv32imc, riscv32imac (ilp32), riscv32imafc (ilp32f), riscv64imac (lp64),
# riscv64gc (lp64d). zephyr-lang-rust (Rust applications) uses riscv32i and
# riscv64imac.
function(etch_riscv_target triple_var flags_var why_var)
  set(triple "")
  set(flags "")
  set(why "")
  set(hard_float OFF)
  if(CONFIG_FPU AND CONFIG_FLOAT_HARD)
    set(hard_float ON)
  endif()
  if(CONFIG_RISCV_ISA_RV32E)
    set(why "RV32E (16 registers) has no Rust target in rustup")
  elseif(CONFIG_RISCV_ISA_RV32I)
    if(hard_float)
      if(CONFIG_CPU_HAS_FPU_DOUBLE_PRECISION)
        set(why "RV32 with the double-precision hard-float ABI (ilp32d) has no Rust target (CONFIG_FLOAT_HARD=n gives ilp32)")
      elseif(CONFIG_RISCV_ISA_EXT_M AND CONFIG_RISCV_ISA_EXT_A AND CONFIG_RISCV_ISA_EXT_C)
        set(triple riscv32imafc-unknown-none-elf)
      else()
        set(why "RV32 with the single-precision hard-float ABI (ilp32f) has a Rust target only for RV32IMAFC")
      endif()
    elseif(CONFIG_RISCV_ISA_EXT_M AND CONFIG_RISCV_ISA_EXT_A AND CONFIG_RISCV_ISA_EXT_C)
      set(triple riscv32imac-unknown-none-elf)
    elseif(CONFIG_RISCV_ISA_EXT_M AND CONFIG_RISCV_ISA_EXT_C)
      set(triple riscv32imc-unknown-none-elf)
    elseif(CONFIG_RISCV_ISA_EXT_M AND CONFIG_RISCV_ISA_EXT_A)
      set(triple riscv32imac-unknown-none-elf)
      list(APPEND flags -Ctarget-feature=-c)
    elseif(CONFIG_RISCV_ISA_EXT_M)
      set(triple riscv32im-unknown-none-elf)
    else()
      set(triple riscv32i-unknown-none-elf)
    endif()
  elseif(CONFIG_RISCV_ISA_RV64I)
    if(hard_float)
      if(CONFIG_CPU_HAS_FPU_DOUBLE_PRECISION AND CONFIG_RISCV_ISA_EXT_M
         AND CONFIG_RISCV_ISA_EXT_A AND CONFIG_RISCV_ISA_EXT_C)
        set(triple riscv64gc-unknown-none-elf)
      else()
        set(why "RV64 with hard float has a Rust target only for RV64GC with the lp64d ABI (CONFIG_FLOAT_HARD=n gives lp64)")
      endif()
    elseif(CONFIG_RISCV_ISA_EXT_M AND CONFIG_RISCV_ISA_EXT_A)
      set(triple riscv64imac-unknown-none-elf)
      if(NOT CONFIG_RISCV_ISA_EXT_C)
        list(APPEND flags -Ctarget-feature=-c)
      endif()
    else()
      set(why "RV64 without the M and A extensions has no Rust target")
    endif()
  else()
    set(why "this RISC-V ISA (not RV32I/RV64I) has no Rust target")
  endif()
  set(${triple_var} ${triple} PARENT_SCOPE)
  set(${flags_var} ${flags} PARENT_SCOPE)
  set(${why_var} ${why} PARENT_SCOPE)
endfunction()

# Sets <triple_var>, <rustflags_var> (list) and <features_var> (list of cargo
# features the core implies: dsp).
function(etch_rust_target triple_var rustflags_var features_var)
  set(flags "")
  set(features "")
  set(cpu "")
  set(triple "")
  set(why "")
  if(CONFIG_ARCH_POSIX)
    if(CONFIG_64BIT)
      set(triple x86_64-unknown-linux-gnu)
    else()
      # native_sim builds 32-bit x86 (-m32) unless native/64.
      set(triple i686-unknown-linux-gnu)
    endif()
  elseif(CONFIG_CPU_CORTEX_M0 OR CONFIG_CPU_CORTEX_M0PLUS OR CONFIG_CPU_CORTEX_M1)
    set(triple thumbv6m-none-eabi)
    if(CONFIG_CPU_CORTEX_M0)
      set(cpu cortex-m0)
    elseif(CONFIG_CPU_CORTEX_M0PLUS)
      set(cpu cortex-m0plus)
    else()
      set(cpu cortex-m1)
    endif()
  elseif(CONFIG_CPU_CORTEX_M3)
    set(triple thumbv7m-none-eabi)
    set(cpu cortex-m3)
  elseif(CONFIG_CPU_CORTEX_M4 OR CONFIG_CPU_CORTEX_M7)
    set(triple thumbv7em-none-eabi)
    if(CONFIG_CPU_CORTEX_M4)
      set(cpu cortex-m4)
    else()
      set(cpu cortex-m7)
    endif()
    # Every Armv7E-M core has the DSP extension.
    list(APPEND features dsp)
  elseif(CONFIG_CPU_CORTEX_M23)
    set(triple thumbv8m.base-none-eabi)
    set(cpu cortex-m23)
  elseif(CONFIG_CPU_CORTEX_M33 OR CONFIG_CPU_CORTEX_M35P OR CONFIG_CPU_CORTEX_M55
         OR CONFIG_CPU_CORTEX_M85)
    set(triple thumbv8m.main-none-eabi)
    if(CONFIG_CPU_CORTEX_M33)
      set(cpu cortex-m33)
    elseif(CONFIG_CPU_CORTEX_M35P)
      set(cpu cortex-m35p)
    elseif(CONFIG_CPU_CORTEX_M55)
      set(cpu cortex-m55)
    else()
      set(cpu cortex-m85)
    endif()
    if(CONFIG_ARMV8_M_DSP)
      list(APPEND features dsp)
    else()
      # The DSP extension is optional on Armv8-M Mainline.
      list(APPEND flags -Ctarget-feature=-dsp)
    endif()
    if((CONFIG_CPU_CORTEX_M55 OR CONFIG_CPU_CORTEX_M85) AND NOT CONFIG_ARMV8_1_M_MVEI)
      list(APPEND flags -Ctarget-feature=-mve)
    endif()
  elseif(CONFIG_RISCV)
    etch_riscv_target(triple flags why)
  elseif(CONFIG_ARM64)
    # Zephyr builds ARM64 C code with -mgeneral-regs-only unless CONFIG_FPU:
    # the soft-float target then (no FP/SIMD register touched).
    if(CONFIG_FPU)
      set(triple aarch64-unknown-none)
    else()
      set(triple aarch64-unknown-none-softfloat)
    endif()
  endif()

  if(NOT "${CONFIG_ETCH_RUST_TARGET}" STREQUAL "")
    set(triple ${CONFIG_ETCH_RUST_TARGET})
  endif()
  if(triple STREQUAL "")
    if(NOT why)
      set(why "etch has no Rust target for CONFIG_ARCH=\"${CONFIG_ARCH}\"")
    endif()
    message(FATAL_ERROR "etch (CONFIG_ETCH=y) on ${BOARD}: ${why}.\n"
      "etch builds for native_sim (32/64-bit), Cortex-M0/M0+/M1/M3/M4/M7/M23/M33/"
      "M35P/M55/M85, RISC-V RV32I/RV64I (soft float, or hard float with "
      "CONFIG_FLOAT_HARD: RV32 single, RV64 double precision) and ARM64. "
      "Set CONFIG_ETCH_RUST_TARGET to a Rust target whose ABI matches this "
      "Zephyr build, or CONFIG_ETCH=n.")
  endif()

  if(triple MATCHES "^thumb")
    # The float ABI must match Zephyr's: -eabihf objects only link with
    # CONFIG_FP_HARDABI=y.
    if(CONFIG_FP_HARDABI AND triple MATCHES "-eabi$")
      set(triple ${triple}hf)
    endif()
    if(cpu)
      list(APPEND flags -Ctarget-cpu=${cpu})
      if(NOT CONFIG_FPU AND NOT triple MATCHES "hf$"
         AND cpu MATCHES "^cortex-m(4|7|33|35p|55|85)$")
        # target-cpu implies the core's FPU; without CONFIG_FPU Zephyr leaves
        # it disabled, so no FP instruction may be emitted.
        list(APPEND flags -Ctarget-feature=-fpregs)
      elseif(CONFIG_CPU_CORTEX_M7 AND NOT CONFIG_CPU_HAS_FPU_DOUBLE_PRECISION)
        list(APPEND flags -Ctarget-feature=-fp64)
      endif()
    endif()
  endif()

  set(${triple_var} ${triple} PARENT_SCOPE)
  set(${rustflags_var} ${flags} PARENT_SCOPE)
  set(${features_var} ${features} PARENT_SCOPE)
endfunction()

# --- embedding files --------------------------------------------------------
function(etch_embed target file symbol)
  if(NOT CONFIG_ETCH)
    message(FATAL_ERROR "etch_embed(${target} ${file} ${symbol}): the etch module is off "
      "(CONFIG_ETCH is not y on ${BOARD}). Set CONFIG_ETCH=y in prj.conf; if it is set, "
      "Kconfig refused it: see the warnings above.")
  endif()
  cmake_parse_arguments(EMB "NPY" "SECTION;ALIGN" "" ${ARGN})
  if(NOT EMB_ALIGN)
    set(EMB_ALIGN 16)
  endif()
  get_filename_component(file ${file} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  if(NOT EXISTS ${file})
    message(FATAL_ERROR "etch_embed: ${file} does not exist")
  endif()
  set(gen_dir ${CMAKE_BINARY_DIR}/etch/include)
  set(args --input ${file} --symbol ${symbol} --align ${EMB_ALIGN}
    --output ${CMAKE_BINARY_DIR}/etch/gen/${symbol}.c --header ${gen_dir}/${symbol}.h)
  if(EMB_NPY)
    list(APPEND args --npy)
  endif()
  if(NOT "${EMB_SECTION}" STREQUAL "")
    list(APPEND args --section ${EMB_SECTION})
  endif()
  # The header is written at configure time (so its size macro is right when
  # sources compile) and again at build time with the data.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  execute_process(COMMAND ${PYTHON_EXECUTABLE} ${ETCH_DIR}/cmake/etch_embed.py
    ${args} --header-only RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "etch_embed: cannot read ${file}")
  endif()
  add_custom_command(
    OUTPUT ${CMAKE_BINARY_DIR}/etch/gen/${symbol}.c
    COMMAND ${PYTHON_EXECUTABLE} ${ETCH_DIR}/cmake/etch_embed.py ${args}
    DEPENDS ${file} ${ETCH_DIR}/cmake/etch_embed.py
    COMMENT "etch: embedding ${file} as ${symbol}"
    VERBATIM)
  target_sources(${target} PRIVATE ${CMAKE_BINARY_DIR}/etch/gen/${symbol}.c)
  target_include_directories(${target} PRIVATE ${gen_dir})
endfunction()

# etch_embed_steps(<target> <steps_dir> <header>): a step sequence written by
# ExecuTorch's own runtime executing one loaded method step after step
# (tools/export: <k>.input<i>.npy and <k>.output<j>.npy, k = 0, 1, ...),
# each .npy's data embedded (etch_embed NPY) and listed, in step order, in
# a generated header <header> (e.g. stream_steps.h):
#   struct etch_step_tensor { unsigned int step, index; const uint8_t *data; size_t size; };
#   ETCH_STEPS (number of steps), ETCH_STEP_FILES (number of .npy files),
#   etch_step_inputs[], etch_step_outputs[]
function(etch_embed_steps target steps_dir header)
  if(NOT IS_DIRECTORY ${steps_dir})
    message(FATAL_ERROR "etch_embed_steps: no steps folder ${steps_dir}")
  endif()
  file(GLOB npys RELATIVE ${steps_dir} ${steps_dir}/*.npy)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${steps_dir})
  set(includes "")
  set(inputs "")
  set(outputs "")
  # Numeric order of k (a glob sorts 10 before 2).
  set(k 0)
  while(TRUE)
    set(found OFF)
    foreach(kind input output)
      set(i 0)
      while(EXISTS ${steps_dir}/${k}.${kind}${i}.npy)
        set(found ON)
        set(sym etch_step_${k}_${kind}${i})
        etch_embed(${target} ${steps_dir}/${k}.${kind}${i}.npy ${sym} NPY)
        string(APPEND includes "#include <${sym}.h>\n")
        string(TOUPPER ${sym} SYM)
        string(APPEND ${kind}s "\t{${k}, ${i}, ${sym}_data, ${SYM}_SIZE},\n")
        math(EXPR i "${i} + 1")
      endwhile()
    endforeach()
    if(NOT found)
      break()
    endif()
    math(EXPR k "${k} + 1")
  endwhile()
  list(LENGTH npys num_files)
  if(k LESS 1)
    message(FATAL_ERROR "etch_embed_steps: ${steps_dir} has no step 0")
  endif()
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/etch_steps)
  file(WRITE ${gen}/${header}.in
"/* Generated by etch_embed_steps() from ${steps_dir}. */
#ifndef ETCH_STEPS_H
#define ETCH_STEPS_H
#include <stddef.h>
#include <stdint.h>
${includes}
struct etch_step_tensor {
\tunsigned int step;
\tunsigned int index;
\tconst uint8_t *data;
\tsize_t size;
};
#define ETCH_STEPS ${k}u
#define ETCH_STEP_FILES ${num_files}u
static const struct etch_step_tensor etch_step_inputs[] = {
${inputs}};
static const struct etch_step_tensor etch_step_outputs[] = {
${outputs}};
#endif
")
  configure_file(${gen}/${header}.in ${gen}/${header} COPYONLY)
  target_include_directories(${target} PRIVATE ${gen})
endfunction()

# --- the module --------------------------------------------------------------
function(etch_zephyr_module)
  find_program(ETCH_CARGO cargo HINTS $ENV{CARGO_HOME}/bin $ENV{HOME}/.cargo/bin)
  find_program(ETCH_RUSTC rustc HINTS $ENV{CARGO_HOME}/bin $ENV{HOME}/.cargo/bin)
  if(NOT ETCH_CARGO OR NOT ETCH_RUSTC)
    message(FATAL_ERROR "etch: cargo/rustc not found (install Rust with rustup)")
  endif()

  etch_rust_target(triple rustflags target_features)
  execute_process(COMMAND ${ETCH_RUSTC} --print target-libdir --target ${triple}
    OUTPUT_VARIABLE libdir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT EXISTS "${libdir}")
    message(FATAL_ERROR
      "etch: the Rust target ${triple} is not installed: rustup target add ${triple}")
  endif()

  set(work ${CMAKE_BINARY_DIR}/etch)
  file(MAKE_DIRECTORY ${work}/include ${work}/gen)

  # Model: path relative to the application.
  set(model "")
  if(NOT "${CONFIG_ETCH_MODEL}" STREQUAL "")
    get_filename_component(model ${CONFIG_ETCH_MODEL} ABSOLUTE BASE_DIR ${APPLICATION_SOURCE_DIR})
    if(NOT EXISTS ${model})
      message(FATAL_ERROR "etch: CONFIG_ETCH_MODEL=${CONFIG_ETCH_MODEL}: ${model} does not exist")
    endif()
  endif()

  # Cargo features implied by Kconfig (the operator/dtype selection is added
  # at build time by etch_cargo.cmake).
  set(features ${target_features})
  if(CONFIG_ETCH_VERIFY)
    list(APPEND features verify)
  endif()
  if(CONFIG_ETCH_FRONTEND)
    list(APPEND features frontend)
  endif()
  if(CONFIG_ETCH_ETDUMP)
    list(APPEND features etdump)
  endif()
  if(CONFIG_ETCH_DYNAMIC_SHAPES)
    list(APPEND features dynamic)
  endif()
  if(CONFIG_ETCH_DECODED_CALLS)
    list(APPEND features decoded-calls)
  endif()
  if(CONFIG_ETCH_LOG)
    set(levels "" log-level-error log-level-warn log-level-info log-level-debug)
    if(CONFIG_ETCH_LOG_LEVEL GREATER 0)
      set(level ${CONFIG_ETCH_LOG_LEVEL})
      if(level GREATER 4)
        set(level 4)
      endif()
      list(GET levels ${level} feature)
      list(APPEND features ${feature})
    endif()
  endif()

  # CONFIG_ETCH_CARGO_OFFLINE: cargo never touches the network (the crates
  # were fetched after `west update`, docs/zephyr.md).
  set(offline_args "")
  if(CONFIG_ETCH_CARGO_OFFLINE)
    set(offline_args --offline)
  endif()

  # Host `etch` CLI for `etch select`: a prebuilt one (ETCH_CLI, cache or
  # environment), else built once per build folder, or in a shared folder
  # (ETCH_HOST_TARGET_DIR) so many builds (twister) build it once.
  set(cli "")
  set(cli_dep "")
  if(model AND CONFIG_ETCH_OPS_FROM_MODEL)
    if(DEFINED ENV{ETCH_CLI} AND NOT ETCH_CLI)
      set(ETCH_CLI $ENV{ETCH_CLI})
    endif()
    if(ETCH_CLI)
      set(cli ${ETCH_CLI})
    else()
      if(DEFINED ENV{ETCH_HOST_TARGET_DIR} AND NOT ETCH_HOST_TARGET_DIR)
        set(ETCH_HOST_TARGET_DIR $ENV{ETCH_HOST_TARGET_DIR})
      endif()
      if(NOT ETCH_HOST_TARGET_DIR)
        set(ETCH_HOST_TARGET_DIR ${work}/host)
      endif()
      set(cli ${ETCH_HOST_TARGET_DIR}/release/etch)
      file(GLOB_RECURSE host_sources CONFIGURE_DEPENDS
        ${ETCH_DIR}/rust/etch-pte/src/*.rs ${ETCH_DIR}/rust/etch-runtime/src/*.rs
        ${ETCH_DIR}/rust/etch-kernels/src/*.rs ${ETCH_DIR}/rust/etch-cli/src/*.rs
        ${ETCH_DIR}/rust/etch-frontend/src/*.rs ${ETCH_DIR}/rust/etch-etdump/src/*.rs
        ${ETCH_DIR}/rust/*/Cargo.toml)
      add_custom_command(
        OUTPUT ${cli}
        COMMAND ${CMAKE_COMMAND} -E env --unset=RUSTFLAGS
          CARGO_TARGET_DIR=${ETCH_HOST_TARGET_DIR}
          ${ETCH_CARGO} build --release --locked ${offline_args} -p etch-cli
          --manifest-path ${ETCH_DIR}/Cargo.toml
        DEPENDS ${host_sources} ${ETCH_DIR}/Cargo.toml ${ETCH_DIR}/Cargo.lock
        COMMENT "etch: building the host etch CLI (etch select)"
        USES_TERMINAL
        VERBATIM)
      set(cli_dep ${cli})
    endif()
  endif()

  # Everything the cargo step needs, written only when it changes, so a
  # Kconfig change reruns cargo and nothing else does.
  set(lib ${work}/cargo/${triple}/release/libetch.a)
  string(REPLACE ";" " " rustflags_str "${rustflags}")
  set(from_model 0)
  if(CONFIG_ETCH_OPS_FROM_MODEL)
    set(from_model 1)
  endif()
  file(CONFIGURE OUTPUT ${work}/cargo-args.cmake CONTENT
"set(ETCH_CARGO [==[${ETCH_CARGO}]==])
set(ETCH_CLI [==[${cli}]==])
set(ETCH_MODEL [==[${model}]==])
set(ETCH_OPS_FROM_MODEL ${from_model})
set(ETCH_OPS [==[${CONFIG_ETCH_OPS}]==])
set(ETCH_DTYPES [==[${CONFIG_ETCH_DTYPES}]==])
set(ETCH_BASE_FEATURES [==[${features}]==])
set(ETCH_TRIPLE ${triple})
set(ETCH_RUSTFLAGS [==[${rustflags_str}]==])
set(ETCH_REGISTRY_SIZE ${CONFIG_ETCH_KERNEL_REGISTRY_SIZE})
set(ETCH_MANIFEST [==[${ETCH_DIR}/rust/etch-ffi/Cargo.toml]==])
set(ETCH_TARGET_DIR [==[${work}/cargo]==])
set(ETCH_LIB [==[${lib}]==])
set(ETCH_FEATURES_OUT [==[${work}/features.txt]==])
set(ETCH_OFFLINE_ARGS [==[${offline_args}]==])
")

  file(GLOB_RECURSE rust_sources CONFIGURE_DEPENDS
    ${ETCH_DIR}/rust/etch-pte/src/*.rs ${ETCH_DIR}/rust/etch-runtime/src/*.rs
    ${ETCH_DIR}/rust/etch-kernels/src/*.rs ${ETCH_DIR}/rust/etch-ffi/src/*.rs
    ${ETCH_DIR}/rust/etch-frontend/src/*.rs ${ETCH_DIR}/rust/etch-frontend/build.rs
    ${ETCH_DIR}/rust/etch-ffi/build.rs ${ETCH_DIR}/rust/*/Cargo.toml)
  set(model_dep "")
  if(model AND CONFIG_ETCH_OPS_FROM_MODEL)
    set(model_dep ${model})
  endif()
  add_custom_command(
    OUTPUT ${lib} ${work}/features.txt
    COMMAND ${CMAKE_COMMAND} -DARGS=${work}/cargo-args.cmake
      -P ${ETCH_DIR}/cmake/etch_cargo.cmake
    DEPENDS ${rust_sources} ${work}/cargo-args.cmake ${ETCH_DIR}/cmake/etch_cargo.cmake
      ${model_dep} ${cli_dep}
    COMMENT "etch: cargo build rust/etch-ffi for ${triple}"
    USES_TERMINAL
    VERBATIM)
  add_custom_target(etch_cargo DEPENDS ${lib})
  add_library(etch_ffi STATIC IMPORTED GLOBAL)
  set_target_properties(etch_ffi PROPERTIES IMPORTED_LOCATION ${lib})
  add_dependencies(etch_ffi etch_cargo)

  zephyr_include_directories(${ETCH_DIR}/include ${ETCH_DIR}/zephyr/include ${work}/include)

  zephyr_library_named(etch_zephyr)
  zephyr_library_sources(${ETCH_DIR}/zephyr/src/etch_zephyr.c)
  zephyr_library_sources_ifdef(CONFIG_ETCH_LOG ${ETCH_DIR}/zephyr/src/etch_log.c)
  zephyr_library_sources_ifdef(CONFIG_ETCH_ETDUMP ${ETCH_DIR}/zephyr/src/etch_etdump_console.c)
  zephyr_library_sources_ifdef(CONFIG_ETCH_MODEL_SLOTS ${ETCH_DIR}/zephyr/src/etch_zephyr_models.c)
  add_dependencies(etch_zephyr etch_cargo)
  if(model)
    set(section_args "")
    if(NOT "${CONFIG_ETCH_MODEL_SECTION}" STREQUAL "")
      set(section_args SECTION ${CONFIG_ETCH_MODEL_SECTION})
    endif()
    etch_embed(etch_zephyr ${model} etch_model ${section_args})
    zephyr_library_compile_definitions(ETCH_HAVE_MODEL=1)
    if(CONFIG_ETCH_PLANNED_MEMORY)
      # One static buffer per planned buffer (memory id) of the method, sized
      # from the program and placed by the devicetree or Kconfig. Written at
      # configure time, so <etch_planned.h>'s sizes are right when sources
      # compile; the model is already a configure dependency (etch_embed).
      execute_process(COMMAND ${PYTHON_EXECUTABLE} ${ETCH_DIR}/cmake/etch_planned.py
        --input ${model} --method ${CONFIG_ETCH_PLANNED_METHOD}
        --regions "${CONFIG_ETCH_PLANNED_REGIONS}"
        --header ${work}/include/etch_planned.h --output ${work}/gen/etch_planned.c
        RESULT_VARIABLE rc ERROR_VARIABLE err)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${err}")
      endif()
      zephyr_library_sources(${work}/gen/etch_planned.c)
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
        ${ETCH_DIR}/cmake/etch_planned.py)
    endif()
  endif()
  zephyr_library_link_libraries(etch_ffi)
  # Rust objects carry no .note.GNU-stack; twister turns ld's warning about
  # that into an error.
  zephyr_link_libraries(-Wl,-z,noexecstack)
endfunction()
