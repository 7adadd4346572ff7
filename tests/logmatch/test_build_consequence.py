"""Build tails: a line where a build frontend (pip, CMake, make, pypa/build) only says its step
failed ranks below the line that says why, and a disk that filled up is that, not a build
failure."""

from incidents.logmatch import analyze
from incidents.logmatch.generic import is_consequence, is_generic


def test_a_build_frontend_that_says_its_step_failed_only_reports_the_failure():
    for line in (
        "  × Getting requirements to build wheel did not run successfully.",
        "error: metadata-generation-failed",
        "  ERROR: Failed building editable for vllm",
        "ERROR: Failed to build 'cffi' when getting requirements to build wheel",
        "  *** CMake build failed",
        "-- Configuring incomplete, errors occurred!",
        "/usr/bin/nvcc: returned nonzero exit status",
        "CMake Error at cmake/paddle.cmake:31 (message):",
        "note: This error originates from a subprocess, and is likely not a problem with pip.",
    ):
        assert is_consequence(line), line
    assert not is_consequence("src/a.c:9:10: fatal error: portaudio.h: No such file or directory")
    assert not is_consequence("CMake Error at CMakeLists.txt:8 (find_package): Could not find CUDA")


def test_a_disk_that_filled_up_during_a_wheel_build_ranks_before_the_wheel(catalog_index):
    tail = (
        "      /usr/bin/ld: final link failed: No space left on device\n"
        "      error: command '/usr/bin/g++' failed with exit code 1\n"
        "      [end of output]\n"
        "  ERROR: Failed building wheel for deepspeed\n"
        "ERROR: Failed to build installable wheels for some pyproject.toml based projects\n"
    )
    assert analyze(tail, catalog_index).suggestions[0].slug == "disk-full"


def test_msvc_unable_to_name_its_object_file_ranks_before_pip_s_note_in_a_wrapped_line(
    catalog_index,
):
    """A Chinese console wraps C1083's line before its message: the wrapped half still says
    the path is too long, and pip's closing note only reports the failed compile."""
    tail = (
        "    E:\\work\\GroundingDINO\\csrc\\MsDeformAttn\\ms_deform_attn_cpu.cpp : fatal error C1083: 无 \n"
        "法打开编译器生成的文件: “”: Invalid argument\n"
        "    error: command 'E:\\\\MSVC\\\\bin\\\\HostX86\\\\x64\\\\cl.exe' failed with exit code 1\n"
        "    [end of output]\n"
        "\n"
        "note: This error originates from a subprocess, and is likely not a problem with pip.\n"
    )
    assert analyze(tail, catalog_index).suggestions[0].slug == "windows-long-path"


def test_a_cmake_call_stack_says_where_not_what():
    assert is_generic("  CMakeLists.txt:22 (include)")
    assert is_generic("  cmake/external/paddle.cmake:31 (find_package)")
    assert not is_generic("CMake Error at CMakeLists.txt:22 (find_package): Could not find CUDA")


def test_a_python_import_that_failed_inside_cmake_ranks_before_cmake_s_complaint(catalog_index):
    tail = (
        "+ cmake .. -DCMAKE_BUILD_TYPE=Release -DWITH_ARM=ON\n"
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        "ModuleNotFoundError: No module named 'paddle'\n"
        "CMake Error at cmake/paddle.cmake:31 (message):\n"
        "  NO Installed Paddle Found in\n"
        "Call Stack (most recent call first):\n"
        "  CMakeLists.txt:22 (include)\n"
        "\n"
        "-- Configuring incomplete, errors occurred!\n"
    )
    assert analyze(tail, catalog_index).suggestions[0].slug == "python-module-missing"
