"""What the diagnosis makes of a tail beyond single matches: the line that explains a failure
beats the line that only reports it, a clear stage offers its usual failure when nothing else
matches, and toolchain failures are errors of a build."""

from __future__ import annotations

from incidents.logmatch import IncidentSpec, SignatureSpec, analyze, build_index

from .conftest import KILLED_BUILD_STEP

INCIDENTS = [
    IncidentSpec("host-oom", "Host memory exhausted", "train", "", "The OOM killer."),
    IncidentSpec("queue-job-died", "The scheduler killed the job", "train", "", "Slurm."),
    IncidentSpec("build-failure", "Toolchain broken", "build", "", "Mismatched toolchain.", True),
    IncidentSpec("data-unsorted", "Utterances unsorted", "data", "", "utt2spk not sorted."),
]
SIGNATURES = [
    SignatureSpec("oom", "host-oom", r"oom-kill event"),
    SignatureSpec("cancelled", "queue-job-died", r"\*\*\* (JOB|STEP) \S+ ON \S+ CANCELLED AT \S+"),
]
INDEX = build_index(INCIDENTS, SIGNATURES)

SLURM = [
    "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=9411285.0. Some of your "
    "processes may have been killed by the cgroup out-of-memory handler.",
    "srun: launch/slurm: _step_signal: Terminating StepId=9411285.0",
    "slurmstepd: error: *** STEP 9411285.0 ON gpu20-15 CANCELLED AT 2022-05-17T17:58:10 ***",
]


def _slugs(tail: str, **kwargs) -> list[str]:
    return [suggestion.slug for suggestion in analyze(tail, INDEX, **kwargs).suggestions]


def test_the_line_that_explains_a_cancellation_ranks_above_the_cancellation():
    report = analyze("\n".join(SLURM), INDEX)
    assert [s.slug for s in report.suggestions] == ["host-oom", "queue-job-died"]
    assert "only reports the failure" in report.suggestions[0].why


def test_also_when_the_scheduler_prints_the_explanation_after_the_cancellation():
    assert _slugs("\n".join(SLURM[1:] + SLURM[:1])) == ["host-oom", "queue-job-died"]


def test_a_cancellation_alone_or_with_its_reason_is_the_answer():
    assert _slugs(SLURM[2]) == ["queue-job-died"]
    timed_out = SLURM[2].replace("***", "DUE TO TIME LIMIT ***").replace("***", "***", 1)
    assert _slugs("\n".join([SLURM[0], timed_out]))[0] in {"host-oom", "queue-job-died"}


BUILD = [
    "[ 42%] Building CXX object src/CMakeFiles/decoder.dir/lattice.cc.o",
    "/src/lattice.cc:12:10: fatal error: fst/fstlib.h: No such file or directory",
    "compilation terminated.",
    "make[2]: *** [src/CMakeFiles/decoder.dir/build.make:76: lattice.cc.o] Error 1",
    "make: *** [Makefile:136: all] Error 2",
]


def test_a_clear_build_that_matches_nothing_gets_the_builds_usual_failure_as_a_lead():
    report = analyze("\n".join(BUILD), INDEX)
    (lead,) = report.suggestions
    assert (report.stage, lead.slug, lead.confident) == ("build", "build-failure", False)
    assert lead.evidence[0].line == 2  # the line that explains it, not make's report
    assert lead.evidence[0].kind == "stage"
    assert lead.why.startswith("Nothing else explains this build log")


def test_a_build_whose_errors_only_report_a_failed_step_still_gets_the_lead_there():
    tail = [
        "[ 67%] Built target compatible_gloo",
        "make: *** [Makefile:130: all] Error 2",
        "Traceback (most recent call last):",
        '  File "/tmp/pip-install-b45r3x6k/horovod/setup.py", line 142, in <module>',
        "    setup(name='horovod',",
    ]
    report = analyze("\n".join(tail), INDEX)
    (lead,) = report.suggestions
    assert (lead.slug, lead.confident, lead.evidence[0].line) == ("build-failure", False, 2)


def test_a_killed_build_steps_lead_points_at_the_kill_not_at_makes_fallout():
    report = analyze(KILLED_BUILD_STEP, INDEX)
    (lead,) = report.suggestions
    assert (lead.slug, lead.confident) == ("build-failure", False)
    assert lead.evidence[0].line == report.key_line.number
    assert lead.evidence[0].text != "make[2]: *** Waiting for unfinished jobs...."


def test_no_stage_lead_where_the_stage_rests_on_keywords_or_something_matched():
    assert _slugs("error: compilation failed while linking the decoder") == []
    assert _slugs("\n".join([*BUILD, SLURM[0]]))[0] == "host-oom"


def test_the_log_path_makes_a_stage_clear():
    tail = BUILD[1]
    assert _slugs(tail) == []
    assert _slugs(tail, log_path="tools/build/make.log") == ["build-failure"]


def test_a_compiler_the_oom_killer_took_is_host_memory_not_a_broken_toolchain(catalog_index):
    tail = "\n".join(
        [
            "g++ -O2 -c determinize.cc -o determinize.o",
            "g++: fatal error: Killed signal terminated program cc1plus",
            "compilation terminated.",
            "make[3]: *** [Makefile:518: determinize.lo] Error 1",
            "make: *** [Makefile:71: openfst_compiled] Error 2",
        ]
    )
    report = analyze(tail, catalog_index)
    assert report.stage == "build"
    assert report.suggestions[0].slug == "host-oom"
    assert "build-failure" not in [s.slug for s in report.suggestions if s.confident]


def test_a_program_that_is_not_on_the_path_is_no_missing_artifact(catalog_index):
    tail = "FileNotFoundError: [Errno 2] No such file or directory: 'spm_train': 'spm_train'"
    assert not any(
        s.confident and s.slug == "missing-artifact"
        for s in analyze(tail, catalog_index).suggestions
    )
    checkpoint = "FileNotFoundError: [Errno 2] No such file or directory: 'exp/ckpt/epoch-3.pt'"
    assert analyze(checkpoint, catalog_index).suggestions[0].slug == "missing-artifact"


def test_an_incident_of_another_stage_than_the_tails_clear_one_needs_stronger_evidence():
    tail = "\n".join(
        ["ERROR: kvxq pool broken"] + [f"INFO step {n} torchrun worker ok" for n in range(9)]
    )

    def first(stage: str):
        spec = IncidentSpec("pool", "Pool broken", stage, "", "")
        index = build_index([spec], [SignatureSpec("pool", "pool", r"kvxq pool broken")])
        report = analyze(tail, index)
        return report.stage, report.suggestions[0].confident

    assert first("train") == ("train", True)
    assert first("serve") == ("train", False)


def test_pips_could_not_build_wheels_only_reports_the_line_that_explains_it():
    index = build_index(
        [*INCIDENTS, IncidentSpec("cuda-skew", "CUDA skew", "build", "", "Toolkit differs.")],
        [
            *SIGNATURES,
            SignatureSpec("skew", "cuda-skew", r"detected CUDA version \(\S+\) mismatches"),
            SignatureSpec("wheel", "build-failure", r"Could not build wheels for"),
        ],
    )
    tail = "\n".join(
        [
            "  Building wheel for flash-attn (setup.py) ... error",
            "      RuntimeError:",
            "      The detected CUDA version (12.3) mismatches the version that was used to "
            "compile PyTorch (11.7). Please make sure to use the same CUDA versions.",
            "  ERROR: Failed building wheel for flash-attn",
            "Failed to build flash-attn",
            "ERROR: Could not build wheels for flash-attn, which is required to install "
            "pyproject.toml-based projects",
        ]
    )

    assert [s.slug for s in analyze(tail, index).suggestions][:2] == ["cuda-skew", "build-failure"]
