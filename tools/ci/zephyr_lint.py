#!/usr/bin/env python3
"""Checks of the etch Zephyr module that need no Zephyr tree.

1. Kconfig: parsed with kconfiglib inside a tiny harness that stubs the
   Zephyr symbols it refers to (ARCH_POSIX, CPU_CORTEX_M, LOG, the log-level
   template). Fails on any kconfiglib warning, a symbol without help text, an
   etch symbol outside the "etch" menu, missing required symbols or wrong
   defaults, and on any CONFIG_ETCH_* used by CMake/C/yaml files that Kconfig
   does not define.
2. YAML: zephyr/module.yml, zephyr/etch-submanifest.yml, west.yml and every
   sample.yaml / testcase.yaml parse and have the expected shape.

Usage: tools/ci/zephyr_lint.py [repo-root]
"""
import os
import re
import sys
import tempfile

import kconfiglib
import yaml

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", ".."))
errors = []


def error(msg):
    errors.append(msg)
    print("error: " + msg)


# Zephyr's symbols the etch Kconfig depends on, and the log-level template
# (same symbols and numbering as subsys/logging/Kconfig.template.log_config).
STUB = """
mainmenu "etch Kconfig lint harness"

config ARCH_POSIX
	bool "stub: native_sim"
config CPU_CORTEX_M
	bool "stub: Cortex-M"
config LOG
	bool "stub: logging"
config LOG_DEFAULT_LEVEL
	int "stub: default log level"
	default 3
config MAIN_STACK_SIZE
	int "stub: main stack"
	default 1024
config STACK_SENTINEL
	bool "stub: stack sentinel"
config THREAD_STACK_INFO
	bool "stub: thread stack info"
config SRAM_SIZE
	int "stub: RAM (KB)"
	default 64

menu "Modules"
menu "etch"
source "{etch}/Kconfig"
config ZEPHYR_ETCH_MODULE
	bool
	default y
endmenu
endmenu
"""

ZEPHYR_SYMBOLS = {"MAIN_STACK_SIZE", "STACK_SENTINEL", "THREAD_STACK_INFO"}

LOG_TEMPLATE = """
choice "$(module)_LOG_LEVEL_CHOICE"
	prompt "Max compiled-in log level for $(module-str)"
	default $(module)_LOG_LEVEL_DEFAULT
	depends on LOG
config $(module)_LOG_LEVEL_OFF
	bool "Off"
config $(module)_LOG_LEVEL_ERR
	bool "Error"
config $(module)_LOG_LEVEL_WRN
	bool "Warning"
config $(module)_LOG_LEVEL_INF
	bool "Info"
config $(module)_LOG_LEVEL_DBG
	bool "Debug"
config $(module)_LOG_LEVEL_DEFAULT
	bool "Default"
endchoice

config $(module)_LOG_LEVEL
	int
	depends on LOG
	default 0 if $(module)_LOG_LEVEL_OFF
	default 1 if $(module)_LOG_LEVEL_ERR
	default 2 if $(module)_LOG_LEVEL_WRN
	default 3 if $(module)_LOG_LEVEL_INF
	default 4 if $(module)_LOG_LEVEL_DBG
	default LOG_DEFAULT_LEVEL if $(module)_LOG_LEVEL_DEFAULT
"""

REQUIRED = {
    "ETCH": None,
    "ETCH_MODEL": "",
    "ETCH_MODEL_SECTION": "",
    "ETCH_OPS": "",
    "ETCH_KERNEL_REGISTRY_SIZE": "0",
    "ETCH_LOG": None,
    "ETCH_LOG_LEVEL": None,
    "ETCH_VERIFY": "y",
    "ETCH_PROFILE": None,
}


def lint_kconfig():
    etch_kconfig = os.path.join(ROOT, "Kconfig")
    with tempfile.TemporaryDirectory() as tree:
        os.makedirs(os.path.join(tree, "subsys", "logging"))
        with open(os.path.join(tree, "subsys", "logging",
                               "Kconfig.template.log_config"), "w") as f:
            f.write(LOG_TEMPLATE)
        with open(os.path.join(tree, "Kconfig"), "w") as f:
            f.write(STUB.format(etch=ROOT))
        os.environ["srctree"] = tree
        kconf = kconfiglib.Kconfig(os.path.join(tree, "Kconfig"),
                                   warn_to_stderr=False)
        for w in kconf.warnings:
            error("kconfiglib: " + w)

        ours = [s for s in kconf.unique_defined_syms
                if any(n.filename and os.path.abspath(
                    os.path.join(tree, n.filename)) == etch_kconfig
                       or (n.filename or "").endswith("log_config") and
                       s.name.startswith("ETCH")
                       for n in s.nodes)]
        # Zephyr's own symbols that the module only gives defaults
        # (MAIN_STACK_SIZE, STACK_SENTINEL): defined by Zephyr (the stub).
        ours = [s for s in ours if s.name not in ZEPHYR_SYMBOLS]
        names = {s.name for s in ours}
        for s in ours:
            if not s.name.startswith("ETCH"):
                error(f"Kconfig defines {s.name}: etch symbols start with ETCH")
            for n in s.nodes:
                in_template = (n.filename or "").endswith("log_config")
                if not in_template and not n.help:
                    error(f"CONFIG_{s.name} has no help text")
                # Shown under the ETCH menuconfig (or is ETCH itself); the
                # virtual microphone is a driver that works without etch
                # (the Rust samples use the crates, not CONFIG_ETCH).
                if s.name not in ("ETCH", "ETCH_VIRTUAL_DMIC"):
                    p = n.parent
                    while p is not None and p.item is not kconf.syms["ETCH"]:
                        p = p.parent
                    if p is None:
                        error(f"CONFIG_{s.name} is not inside the ETCH menu")
        for name, default in REQUIRED.items():
            if name not in names:
                error(f"Kconfig lacks CONFIG_{name}")
        choice_ok = any(c.name == "ETCH_LOG_LEVEL_CHOICE" for c in kconf.unique_choices)
        if not choice_ok:
            error("no ETCH log level choice (module = ETCH + log template)")

        # Defaults and visibility in a native_sim-like configuration.
        kconf.syms["ARCH_POSIX"].set_value("y")
        kconf.syms["LOG"].set_value("y")
        kconf.syms["ETCH"].set_value("y")
        for name, default in REQUIRED.items():
            sym = kconf.syms[name]
            if name != "ETCH" and sym.visibility == 0 and name != "ETCH_LOG_LEVEL":
                error(f"CONFIG_{name} is not visible with ETCH=y, LOG=y")
            if default is not None and sym.str_value != default:
                error(f"CONFIG_{name} defaults to {sym.str_value!r}, expected {default!r}")
        if kconf.syms["ETCH_LOG_LEVEL"].str_value != "":
            error("ETCH_LOG_LEVEL should only exist with ETCH_LOG=y")
        kconf.syms["ETCH_LOG"].set_value("y")
        if kconf.syms["ETCH_LOG_LEVEL"].str_value != "3":
            error("ETCH_LOG_LEVEL should follow LOG_DEFAULT_LEVEL (3)")
        kconf.syms["ETCH_LOG_LEVEL_DBG"].set_value("y")
        if kconf.syms["ETCH_LOG_LEVEL"].str_value != "4":
            error("ETCH_LOG_LEVEL_DBG should give level 4")
        if kconf.syms["ETCH_OPS_FROM_MODEL"].visibility != 0:
            error("ETCH_OPS_FROM_MODEL should need a model")
        kconf.syms["ETCH_MODEL"].set_value("model.pte")
        if kconf.syms["ETCH_OPS_FROM_MODEL"].str_value != "y":
            error("ETCH_OPS_FROM_MODEL should default to y with a model")
        if kconf.syms["ETCH_MODEL_EMBEDDED"].str_value != "y":
            error("ETCH_MODEL_EMBEDDED should be y with a model")
        # The build verifies an embedded model on the host (etch select).
        if kconf.syms["ETCH_VERIFY"].str_value != "n":
            error("ETCH_VERIFY should default to n with a model the build verifies")
        kconf.syms["ETCH_OPS_FROM_MODEL"].set_value("n")
        if kconf.syms["ETCH_VERIFY"].str_value != "y":
            error("ETCH_VERIFY should default to y when the build does not verify the model")
        # Offered on every architecture: where no Rust target is derived,
        # cmake/etch.cmake stops the build saying why and what to set
        # (a Kconfig `depends on` gave only "assigned y but got n", then
        # `Unknown CMake command "etch_embed"`).
        kconf.syms["ARCH_POSIX"].set_value("n")
        if kconf.syms["ETCH"].visibility == 0:
            error("ETCH should be offered on every architecture (CMake explains unsupported ones)")

        # Every CONFIG_ETCH_* the module's files use exists.
        defined = {s.name for s in kconf.unique_defined_syms}
        used = {}
        for top in ("CMakeLists.txt", "cmake", "zephyr", "samples", "tests/zephyr"):
            path = os.path.join(ROOT, top)
            files = [path] if os.path.isfile(path) else [
                os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs]
            for fp in files:
                if not fp.endswith((".txt", ".cmake", ".c", ".h", ".yaml", ".yml",
                                    ".conf", ".sh", ".md", ".rs", ".toml")):
                    continue
                with open(fp, errors="replace") as f:
                    for m in re.finditer(r"CONFIG_(ETCH\w*)", f.read()):
                        used.setdefault(m.group(1), fp)
        for name, fp in sorted(used.items()):
            if name not in defined:
                error(f"{os.path.relpath(fp, ROOT)} uses CONFIG_{name}, which Kconfig "
                      "does not define")
        print(f"Kconfig: {len(names)} etch symbols, {len(used)} used by module files")


def load(rel):
    path = os.path.join(ROOT, rel)
    try:
        with open(path) as f:
            return yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        error(f"{rel}: {e}")
        return None


def lint_yaml():
    mod = load("zephyr/module.yml") or {}
    if mod.get("name") != "etch":
        error("zephyr/module.yml: name must be etch")
    build = mod.get("build") or {}
    if build.get("cmake") != "." or build.get("kconfig") != "Kconfig":
        error("zephyr/module.yml: build must be {cmake: ., kconfig: Kconfig}")
    for key in ("samples", "tests"):
        for d in mod.get(key) or []:
            if not os.path.isdir(os.path.join(ROOT, d)):
                error(f"zephyr/module.yml: {key} entry {d} does not exist")

    west = (load("west.yml") or {}).get("manifest", {})
    zephyr = [p for p in west.get("projects", []) if p.get("name") == "zephyr"]
    if not zephyr:
        error("west.yml: no zephyr project")
    else:
        z = zephyr[0]
        if not re.fullmatch(r"v\d+\.\d+\.\d+", str(z.get("revision", ""))):
            error("west.yml: zephyr must be pinned to a release tag (vX.Y.Z)")
        allow = set((z.get("import") or {}).get("name-allowlist") or [])
        for m in ("cmsis_6", "hal_nordic", "hal_stm32"):
            if m not in allow:
                error(f"west.yml: name-allowlist lacks {m}")
    sub = (load("zephyr/etch-submanifest.yml") or {}).get("manifest", {})
    if not any(p.get("name") == "etch" for p in sub.get("projects", [])):
        error("zephyr/etch-submanifest.yml: no etch project")

    count = 0
    for top in ("samples", "tests/zephyr"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name not in ("sample.yaml", "testcase.yaml"):
                    continue
                rel = os.path.relpath(os.path.join(d, name), ROOT)
                doc = load(rel) or {}
                tests = doc.get("tests")
                if not isinstance(tests, dict) or not tests:
                    error(f"{rel}: no tests")
                    continue
                if name == "sample.yaml" and "sample" not in doc:
                    error(f"{rel}: no sample: section")
                common = doc.get("common") or {}
                for tname, t in tests.items():
                    t = {**common, **(t or {})}
                    count += 1
                    if not tname.startswith(("etch.", "sample.etch.")):
                        error(f"{rel}: scenario {tname} should start with etch.")
                    if not t.get("platform_allow"):
                        error(f"{rel}: {tname} has no platform_allow")
                    if t.get("harness") == "console":
                        cfg = t.get("harness_config") or {}
                        for rx in cfg.get("regex") or []:
                            re.compile(rx)
                        if not cfg.get("regex"):
                            error(f"{rel}: {tname}: console harness without regex")
                    for c in t.get("extra_configs") or []:
                        if not re.fullmatch(r"CONFIG_\w+=.+", c):
                            error(f"{rel}: {tname}: bad extra_config {c!r}")
                        m = re.match(r'CONFIG_ETCH_MODEL="(.*)"', c)
                        if m and not os.path.isfile(os.path.join(d, m.group(1))):
                            error(f"{rel}: {tname}: model {m.group(1)} not found")
                for conf in ("prj.conf",):
                    p = os.path.join(d, conf)
                    if os.path.isfile(p):
                        with open(p) as f:
                            for m in re.finditer(r'CONFIG_ETCH_MODEL="(.*)"', f.read()):
                                if not os.path.isfile(os.path.join(d, m.group(1))):
                                    error(f"{os.path.relpath(p, ROOT)}: model "
                                          f"{m.group(1)} not found")
    print(f"yaml: module.yml, west.yml, submanifest, {count} twister scenarios")


lint_kconfig()
lint_yaml()
if errors:
    print(f"zephyr lint: {len(errors)} error(s)")
    sys.exit(1)
print("zephyr lint: ok")
