"""The compiler wrapper of dsfields' own op builds (launch/quickcxx.py), on a fake torch header and the real g++.

The fake ``torch/extension.h`` makes each precompiled header a fraction of a second; the wrapper, GCC and the
flags are the real ones, as torch's ninja file passes them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from dsfields.launch import quickcxx

pytestmark = pytest.mark.lane("build")  # the tests below without a lane mark of their own

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


@pytest.mark.unit
def test_quick_flags_compile_at_o1_without_debug_information():
    assert quickcxx.quick_flags(["-O3", "-g", "-march=native", "-O2", "-Wno-reorder", "-fopenmp"]) == [
        "-O1", "-march=native", "-O1", "-Wno-reorder", "-fopenmp"]


@pytest.mark.unit
def test_split_compile_keeps_what_the_header_shares_and_sets_apart_the_op_and_its_release():
    args = ["-MMD", "-MF", "a.o.d", "-DTORCH_EXTENSION_NAME=cpu_adam", "-DTORCH_API_INCLUDE_EXTENSION_H",
            "-I/r/csrc/includes", "-I", "/r/other", "-isystem", "/t/include", "-fPIC", "-O1", "-c", "/r/a.cpp",
            "-o", "a.o"]
    flags, includes, source = quickcxx.split_compile(args)
    assert flags == ["-DTORCH_API_INCLUDE_EXTENSION_H", "-isystem", "/t/include", "-fPIC", "-O1"]
    assert includes == ["/r/csrc/includes", "/r/other"]
    assert source == "/r/a.cpp"


@pytest.mark.unit
@pytest.mark.parametrize(("text", "header", "expected"), [
    ("// (c) someone\n#include <torch/extension.h>\nint f();\n", "", (True, [])),
    ('/* licence\n */\n#include "local.h"\nint f();\n',
     "#pragma once\n#define NOMINMAX  // a comment\n#include <stdio.h>\n#include <torch/extension.h>\n",
     (True, ["NOMINMAX"])),
    ('#include "local.h"\n', "#ifndef LOCAL_H\n#define LOCAL_H\n#include <torch/extension.h>\n#endif\n",
     (True, ["LOCAL_H"])),
    ("int before;\n#include <torch/extension.h>\n", "", None),  # code first: forcing torch first could change it
    ("#ifdef FAST\n#include <torch/extension.h>\n#endif\n", "", None),  # a conditional include
    ('#include "local.h"\n', "struct S {};\n#include <torch/extension.h>\n", None),
    ("#include <vector>\nint f();\n", "", None),  # no torch before the code
    ('#include <vector>\n#include "local.h"\n', "#pragma once\n", (False, [])),  # directives only, no torch
])
def test_torch_preamble_is_what_comes_before_torchs_header(tmp_path, text, header, expected):
    (tmp_path / "a.cpp").write_text(text)
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "local.h").write_text(header)
    assert quickcxx.torch_preamble(tmp_path / "a.cpp", [str(tmp_path / "inc")]) == expected


def _fake_torch(root: Path, body: str = "") -> Path:
    """An include root with torch/extension.h (and c10/detail.h, which it includes)."""
    (root / "torch").mkdir(parents=True, exist_ok=True)
    (root / "c10").mkdir(exist_ok=True)
    (root / "c10" / "detail.h").write_text("#pragma once\ninline int detail() { return 7; }\n")
    (root / "torch" / "extension.h").write_text(
        "#pragma once\n#include <c10/detail.h>\n"
        "#ifdef DSF_WIDE\ninline int width() { return 16; }\n#else\ninline int width() { return 8; }\n#endif\n"
        + body)
    return root


def _compile(wrapper: Path, torch: Path, release: Path, source: str, name: str,
             *extra: str, stem: str = "") -> subprocess.CompletedProcess:
    src = release / f"{stem or name}.cpp"
    src.write_text(source)
    args = [str(wrapper), "-MMD", "-MF", f"{name}.o.d", f"-DTORCH_EXTENSION_NAME={name}",
            f"-I{release / 'includes'}", "-isystem", str(torch), "-fPIC", "-std=c++17", "-O3", "-g", "-H", *extra,
            "-c", str(src), "-o", str(release / f"{name}.o")]
    return subprocess.run(args, cwd=release, capture_output=True, text=True, check=False)


def _used_pch(done: subprocess.CompletedProcess) -> bool:
    """GCC's -H marks a precompiled header it used with ``!``."""
    return any(line.startswith("! ") and line.endswith(".gch") for line in done.stderr.splitlines())


def _value(wrapper: Path, release: Path, name: str) -> int:
    """Link the object into a program printing ``width() * 10 + detail()``: what the compile really meant."""
    main = release / "main.cpp"
    main.write_text("#include <cstdio>\nint value();\nint main() { std::printf(\"%d\", value()); }\n")
    exe = release / f"{name}.out"
    subprocess.run([str(wrapper), str(main), str(release / f"{name}.o"), "-o", str(exe)], check=True)
    return int(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)


@pytest.fixture
def cxx(tmp_path, monkeypatch):
    monkeypatch.delenv("DSFIELDS_REAL_CXX", raising=False)
    monkeypatch.setenv("CXX", "g++")
    env: dict[str, str] = {"CXX": "g++"}
    wrapper = quickcxx.install(tmp_path / "cache", env)
    assert env["CXX"] == str(wrapper) and env["DSFIELDS_REAL_CXX"] == "g++"
    release = tmp_path / "release"
    (release / "includes").mkdir(parents=True)
    return wrapper, _fake_torch(tmp_path / "torch"), release, tmp_path / "cache" / "pch"


SOURCE = "#include <torch/extension.h>\nint value() { return width() * 10 + detail(); }\n"


@needs_gxx
def test_every_op_of_a_flag_set_shares_one_precompiled_torch_header(cxx):
    wrapper, torch, release, pch = cxx
    first = _compile(wrapper, torch, release, SOURCE, "cpu_adam")
    second = _compile(wrapper, torch, release, SOURCE, "fused_adam")  # another op name: the same header
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert _used_pch(first) and _used_pch(second)
    assert len(list(pch.iterdir())) == 1
    assert _value(wrapper, release, "fused_adam") == 87
    # The wrapper compiled at -O1 without -g: no debug sections in the object.
    sections = subprocess.run(["objdump", "-h", str(release / "fused_adam.o")], capture_output=True, text=True)
    if sections.returncode == 0:
        assert ".debug_info" not in sections.stdout
    other = _compile(wrapper, torch, release, SOURCE, "comm", "-fopenmp")  # other flags: another header
    assert other.returncode == 0 and _used_pch(other)
    assert len(list(pch.iterdir())) == 2


@needs_gxx
def test_a_macro_defined_before_torch_that_torchs_headers_read_gets_the_plain_compile(cxx):
    wrapper, torch, release, _ = cxx
    (release / "includes" / "wide.h").write_text("#pragma once\n#define DSF_WIDE 1\n#include <torch/extension.h>\n")
    done = _compile(wrapper, torch, release, '#include "wide.h"\nint value() { return width() * 10 + detail(); }\n',
                    "wide")
    assert done.returncode == 0, done.stderr
    assert not _used_pch(done)
    assert _value(wrapper, release, "wide") == 167  # the header saw DSF_WIDE, as in DeepSpeed's own build
    (release / "includes" / "narrow.h").write_text("#pragma once\n#define NOMINMAX\n#include <torch/extension.h>\n")
    done = _compile(wrapper, torch, release, '#include "narrow.h"\nint value() { return width() * 10 + detail(); }\n',
                    "narrow")
    assert _used_pch(done)  # a macro no torch header names changes nothing


@needs_gxx
def test_a_release_header_that_would_shadow_one_of_torchs_gets_the_plain_compile(cxx):
    wrapper, torch, release, _ = cxx
    assert _used_pch(_compile(wrapper, torch, release, SOURCE, "before"))
    (release / "includes" / "c10").mkdir()
    (release / "includes" / "c10" / "detail.h").write_text("#pragma once\ninline int detail() { return 3; }\n")
    done = _compile(wrapper, torch, release, SOURCE, "shadowed")
    assert done.returncode == 0 and not _used_pch(done)
    assert _value(wrapper, release, "shadowed") == 83  # -I before -isystem: the release's header, as without us


@needs_gxx
def test_a_torch_header_changed_after_precompiling_is_precompiled_again(cxx):
    wrapper, torch, release, _ = cxx
    assert _compile(wrapper, torch, release, SOURCE, "old").returncode == 0
    (torch / "c10" / "detail.h").write_text("#pragma once\ninline int detail() { return 5; }  // torch reinstalled\n")
    done = _compile(wrapper, torch, release, SOURCE, "new")
    assert done.returncode == 0 and _used_pch(done)
    assert _value(wrapper, release, "new") == 85


def _gch_files(pch: Path) -> dict[Path, tuple[int, int]]:
    return {g: (g.stat().st_ino, g.stat().st_mtime_ns) for g in pch.glob("*/*.gch")}


@needs_gxx
def test_the_same_torch_installed_at_another_path_uses_the_same_precompiled_header(cxx, tmp_path):
    """Every release runtime (and the dev virtualenv) has its own copy of one torch: one header serves them all."""
    wrapper, torch, release, pch = cxx
    assert _used_pch(_compile(wrapper, torch, release, SOURCE, "cpu_adam"))
    built = _gch_files(pch)
    other = tmp_path / "env2" / "torch"
    shutil.copytree(torch, other)  # the same bytes, other path and mtimes
    done = _compile(wrapper, other, release, SOURCE, "fused_adam")
    assert done.returncode == 0 and _used_pch(done), done.stderr
    assert _gch_files(pch) == built  # not precompiled again
    assert _value(wrapper, release, "fused_adam") == 87


@needs_gxx
@pytest.mark.parametrize("change", ["header", "extra file"])
def test_a_torch_at_another_path_that_differs_gets_its_own_precompiled_header(cxx, tmp_path, change):
    wrapper, torch, release, pch = cxx
    assert _used_pch(_compile(wrapper, torch, release, SOURCE, "cpu_adam"))
    other = tmp_path / "env2" / "torch"
    shutil.copytree(torch, other)
    if change == "header":
        (other / "c10" / "detail.h").write_text("#pragma once\ninline int detail() { return 3; }\n")
    else:  # a file only one tree has could be what some #include finds first
        (other / "c10" / "extra.h").write_text("#pragma once\n")
    done = _compile(wrapper, other, release, SOURCE, "fused_adam")
    assert done.returncode == 0 and _used_pch(done), done.stderr
    assert len(_gch_files(pch)) == 2
    assert _value(wrapper, release, "fused_adam") == (83 if change == "header" else 87)  # its own torch's headers
    # The first torch still gets its own header, unchanged.
    assert _used_pch(_compile(wrapper, torch, release, SOURCE, "again"))
    assert _value(wrapper, release, "again") == 87


@needs_gxx
def test_anything_but_a_compile_goes_to_the_real_compiler_unchanged(cxx):
    wrapper = cxx[0]
    ours = subprocess.run([str(wrapper), "-dumpfullversion"], capture_output=True, text=True, check=True).stdout
    real = subprocess.run(["g++", "-dumpfullversion"], capture_output=True, text=True, check=True).stdout
    assert ours == real
    assert "g++" in Path(wrapper).name  # torch accepts a compiler whose path names g++ (no warning, no ABI check skip)


def _objects(cache: Path) -> list[Path]:
    return sorted((cache / "objects").glob("*/*.o"))


def _release_compile(wrapper: Path, torch: Path, release: Path, source: str, name: str, monkeypatch,
                     header: str = "") -> subprocess.CompletedProcess:
    """Compile ``source`` (``impl.cpp``) as the build of op ``name`` for a release unpacked at ``release``.

    Like ``cpu_adam_impl.cpp``, which both ``cpu_adam`` and ``fused_adam`` compile.
    """
    (release / "includes").mkdir(parents=True, exist_ok=True)
    (release / "includes" / "local.h").write_text(header or "#pragma once\ninline int local() { return 1; }\n")
    monkeypatch.setenv(quickcxx.RELEASE_ENV, str(release))
    return _compile(wrapper, torch, release, source, name, stem="impl")


LOCAL_SOURCE = ('#include <torch/extension.h>\n#include "local.h"\n'
                "int value() { return width() * 10 + detail() + local(); }\n")


@needs_gxx
def test_an_object_compiled_from_the_same_text_in_another_release_is_copied_not_compiled(cxx, tmp_path, monkeypatch):
    wrapper, torch, _, pch = cxx
    cache = pch.parent
    old, new = tmp_path / "src" / "0.1.0", tmp_path / "src" / "0.2.0"
    # A licence comment and blank lines: not in the preprocessed text, the same object.
    assert _release_compile(wrapper, torch, old, LOCAL_SOURCE, "cpu_adam", monkeypatch).returncode == 0
    done = _release_compile(wrapper, torch, new, "// SPDX-License-Identifier: Apache-2.0\n\n" + LOCAL_SOURCE,
                            "fused_adam", monkeypatch)
    assert done.returncode == 0, done.stderr
    assert len(_objects(cache)) == 1
    assert _value(wrapper, new, "fused_adam") == 88
    # ninja's dependency file comes with the copied object: its own target, this release's header.
    depfile = (new / "fused_adam.o.d").read_text()
    assert depfile.startswith(f"{new / 'fused_adam.o'}:") and str(new / "includes" / "local.h") in depfile


@needs_gxx
def test_a_header_whose_code_changed_gets_its_own_object(cxx, tmp_path, monkeypatch):
    wrapper, torch, _, pch = cxx
    old, new = tmp_path / "src" / "0.1.0", tmp_path / "src" / "0.2.0"
    assert _release_compile(wrapper, torch, old, LOCAL_SOURCE, "cpu_adam", monkeypatch).returncode == 0
    changed = "#pragma once\ninline int local() { return 2; }\n"
    assert _release_compile(wrapper, torch, new, LOCAL_SOURCE, "cpu_adam", monkeypatch, changed).returncode == 0
    assert len(_objects(pch.parent)) == 2
    assert (_value(wrapper, old, "cpu_adam"), _value(wrapper, new, "cpu_adam")) == (88, 89)


@needs_gxx
def test_the_op_name_and_the_line_count_reach_the_key_when_the_source_uses_them(cxx, tmp_path, monkeypatch):
    wrapper, torch, _, pch = cxx
    release = tmp_path / "src" / "0.1.0"
    named = ("#include <torch/extension.h>\n#define STR2(x) #x\n#define STR(x) STR2(x)\n"
             "const char* op() { return STR(TORCH_EXTENSION_NAME); }\nint value() { return 1; }\n")
    assert _release_compile(wrapper, torch, release, named, "cpu_adam", monkeypatch).returncode == 0
    assert _release_compile(wrapper, torch, release, named, "fused_adam", monkeypatch).returncode == 0
    assert len(_objects(pch.parent)) == 2  # the name is in each object
    lined = "#include <torch/extension.h>\nint value() { return __LINE__; }\n"
    assert _release_compile(wrapper, torch, release, lined, "a", monkeypatch).returncode == 0
    assert _release_compile(wrapper, torch, release, "\n" + lined, "b", monkeypatch).returncode == 0
    assert (_value(wrapper, release, "a"), _value(wrapper, release, "b")) == (2, 3)


@needs_gxx
def test_an_object_compiled_against_the_same_torch_at_another_path_is_copied(cxx, tmp_path, monkeypatch):
    wrapper, torch, _, pch = cxx
    other = tmp_path / "env2" / "torch"
    shutil.copytree(torch, other)
    old, new = tmp_path / "src" / "0.1.0", tmp_path / "src" / "0.2.0"
    assert _release_compile(wrapper, torch, old, LOCAL_SOURCE, "cpu_adam", monkeypatch).returncode == 0
    assert _release_compile(wrapper, other, new, LOCAL_SOURCE, "cpu_adam", monkeypatch).returncode == 0
    assert len(_objects(pch.parent)) == 1
    assert _value(wrapper, new, "cpu_adam") == 88
    # A torch whose headers differ is not the same text: its own object, its own value.
    (other / "c10" / "detail.h").write_text("#pragma once\ninline int detail() { return 3; }\n")
    assert _release_compile(wrapper, other, new, LOCAL_SOURCE, "cpu_adam", monkeypatch).returncode == 0
    assert len(_objects(pch.parent)) == 2
    assert _value(wrapper, new, "cpu_adam") == 84


WHERE_SOURCE = "#include <torch/extension.h>\nconst char* where() { return __FILE__; }\nint value() { return 4; }\n"


@needs_gxx
@pytest.mark.parametrize("symlinked", [False, True])
def test_file_names_in_objects_are_the_same_in_every_release(cxx, tmp_path, monkeypatch, symlinked):
    """A release reached through a symlink (a cache linked elsewhere) is mapped by either of its paths."""
    wrapper, torch, _, pch = cxx
    for version in ("0.1.0", "0.2.0"):
        real = tmp_path / "store" / version
        real.mkdir(parents=True)
        release = real
        if symlinked:
            release = tmp_path / f"link-{version}"
            release.symlink_to(real)
        (release / "includes").mkdir()
        monkeypatch.setenv(quickcxx.RELEASE_ENV, f"{release}{os.pathsep}{real}")  # as guard_ops_dir sets it
        assert _compile(wrapper, torch, release, WHERE_SOURCE, "shm", stem="impl").returncode == 0
        assert f"{quickcxx.RELEASE_PLACEHOLDER}/impl.cpp".encode() in (release / "shm.o").read_bytes()
    assert len(_objects(pch.parent)) == 1


@pytest.mark.unit
def test_the_release_paths_are_mapped_longest_first():
    assert quickcxx.release_paths(f"/a{os.pathsep}/a/b/{os.pathsep}{os.pathsep}/") == ["/a/b", "/a"]
