"""Clues: each piece of evidence a tail holds for an incident, a line with a strength in
0..1 — from a signature hit, similar text, the numbers of a loss curve, users' feedback on
the same lines, or the tail's clear stage."""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

import re2

from common.phrases import gettext_noop

from .generic import follows_frame, frame_path, is_consequence, is_generic, reports_success
from .prefilter import compiled
from .repetition import repetition
from .signatures import Hit
from .similarity import SimilarityIndex
from .speed import speed_trend
from .tail import DESCRIPTION_LINES, Tail, is_table_row, line_weight
from .trends import loss_trend
from .types import Evidence, Group, IncidentSpec, Level

BENIGN_FLOOR = 0.3  # weight of one hit of a signature healthy logs show too; a flood: 1
# Cosines below the floor are noise; from the ceiling up, text is as close as text gets.
# Similar text never weighs as much as a signature hit: at best SIMILARITY_WEIGHT.
SIMILARITY_FLOOR, SIMILARITY_CEILING = 0.12, 0.42
# In a log, similar text is only ever a lead, never the answer: it is offered from this lower
# floor, so that a failure in a wording no signature knows yet still finds its incident among
# the first three (measured by dropping each incident's signatures: top-3 0.68 -> 0.77 over the
# labelled real tails, with no confident answer changed). Its strength stays on the scale
# above: a lead below SIMILARITY_FLOOR weighs less than any similar text above it.
LOG_SIMILARITY_FLOOR = 0.05
LOG_LEAD_SHARE = 0.1  # of SIMILARITY_WEIGHT, at most, for a lead below SIMILARITY_FLOOR
SIMILARITY_WEIGHT = 0.85
SIMILARITY_QUERIES = 16
LAST_LINES_ASKED = 3  # of a log with no warning or error line
FEEDBACK_CLUE_WEIGHT = 0.6
# A stage's lead incident, offered when nothing else confirms anything, weighs as much as
# fairly close text: above the noise, well below a signature.
STAGE_LEAD_STRENGTH = 0.35
# A process the shell reports as `Killed` with no word of its own got SIGKILL, which the
# kernel's OOM killer sends far more often than anyone else: offered as a lead, as strong as
# a stage lead, when nothing else confirms anything.
# Stronger than text that only resembles some other line: the kill is what ended the run.
KILL_LEAD_STRENGTH = 0.5
KILL_LEAD_REASON = gettext_noop(
    "the process was killed without a word at %(where)s, as the kernel's OOM killer does"
)
# An API error (a name, attribute, key or argument the code expects is not there) raised inside
# an installed package or a model's remote code, rather than in the job's own script, most
# often means one dependency moved under another: offered as a lead, as strong as a kill,
# when nothing else confirms anything. An attribute of None is a missing input, not a move.
DRIFT_LEAD_STRENGTH = 0.5
DRIFT_LEAD_REASON = gettext_noop(
    "an API error at %(where)s (a name, attribute or argument the code expects is not there), "
    "as when a dependency moved"
)
# A KeyError or AttributeError raised in the job's own code, at a line that looks the missing
# key up in a configuration (`data_cfg["start_and_end"]`, `hparams['n_mels']`,
# `params.ter_eval`), most often means the config file is older or newer than the code that
# reads it: offered as a lead, as strong as a drift, when nothing else confirms anything.
CONFIG_LEAD_STRENGTH = 0.5
CONFIG_LEAD_REASON = gettext_noop(
    "a key the code looks up in its configuration is missing at %(where)s, as when the "
    "config file and the code come from different versions"
)
# A configuration's key that code does not find has two readings: a config file of another
# version than the code (the config lead), and a library of another version than the code that
# builds or reads the config (the drift lead). Where the raising frame says which is likelier
# (installed code reading it: a drift; the job's own code: a stale config), that reading leads and
# the other follows at this share of its strength, still a lead: an installed trainer that reads
# `conf.residual_dropout_lima` from the user's YAML, a checkout of Megatron-LM reading
# `self.config.rotary_interleaved` from a TransformerConfig another package built.
SECOND_READING_SHARE = 0.8
# A KeyError raised at a source line that reads that key from one record of the data
# (`example["messages"]`, `sample['audio_filepath']`, `self.data[index]['json_dialogue']`) most
# often means the dataset's records lack a field the code reads: data in another format than
# the one expected. Offered as a lead (`record_lead`), as strong as a config lead, when nothing
# else confirms anything; raised in installed code, it leads and the drift lead follows
# (`SECOND_READING_SHARE`).
RECORD_LEAD_STRENGTH = 0.5
RECORD_LEAD_REASON = gettext_noop(
    "a field the code reads from one record of its data is missing at %(where)s, as when the "
    "dataset is in another format than the code expects"
)
# A collective watchdog prints the work each rank waits in (`WorkNCCL(SeqNum=3437,
# OpType=ALLREDUCE, NumelIn=4311252, …)`; torch_npu's WorkHCCL alike). Two ranks at the same
# sequence number in a different operation or with a different size called different
# collectives: their code paths diverged. That is proof, stronger than any one line, of the
# incident that explains it (`mismatch_lead`), and it outweighs the timeout both report.
MISMATCH_STRENGTH = 1.0
MISMATCH_REASON = gettext_noop(
    "two ranks wait in different collectives at the same step, %(where)s and an earlier line: "
    "their code paths diverged"
)
# pip refuses a pinned release and lists the releases it offers this interpreter and platform
# (`Could not find a version that satisfies the requirement torch==1.4.0 (from versions: 1.11.0,
# 1.12.0)`; `(from whisperx)` before the list when another package required it). When every
# release offered is newer than the pin, the pinned one exists but was never built for this
# Python: proof of the incident that explains it (`pin_lead`), which outweighs the reading of
# pip's line as a pin that does not exist at all.
PIN_STRENGTH = 1.0
PIN_REASON = gettext_noop(
    "on %(where)s, pip refuses a pinned version older than every release it offers: the "
    "pinned release was never built for this Python"
)
_REFUSED_PIN = re2.compile(
    r"satisfies the requirement [\w.\[\],-]+\s*===?\s*v?(\d+(?:\.\d+)*)[^()]*"
    r"(?:\(from [^()]*\)[^()]*)?\(from versions: ([^)]*)\)"
)
_RELEASE = re2.compile(r"^\s*v?(\d+(?:\.\d+)*)")
_RANK_WORK = re2.compile(
    r"\bWork(?:NCCL|HCCL|Gloo|UCC|XCCL)?\(SeqNum=(\d+), OpType=(\w+)(?:, NumelIn=(\d+))?"
)
# The name a subscript is applied to, past any subscripts before it (`cfg["model"]["dim"]`),
# and the names of configurations: whole or after an underscore (`data_cfg`, `train_args`, not
# `kwargs`); a config or cfg may end any name (`model_config`, `dataconfig`).
_SUBSCRIPTED = re.compile(r"([A-Za-z_]\w*)(?:\s*\[[^\]]*\])*\s*$")
_CONFIG_NAME = re.compile(
    r"(?i)(?:(?:^|_)(?:conf|configs|hparams|hps|hyperparams|params|opts|options|settings|args)"
    r"|config|cfg)$"
)
# The names of one record of a dataset, whole or after an underscore (`train_example`,
# `raw_sample`), and an element taken by its index (`self.data[index]`, `rows[i]`).
_RECORD_NAME = re.compile(
    r"(?i)(?:^|_)(?:example|ex|sample|item|record|row|entry|instance|datum|utt|utterance"
    r"|conversation|conv|dialog|dialogue|message|msg|turn|doc|document|line|obj|js|element|elem)$"
)
_INDEXED = re.compile(r"\w\s*\[\s*(?:i|j|k|n|idx|index|\w+_(?:idx|index))\s*\]\s*$")
# After an attribute read: more of its name, or a call (`args.ter_eval_all`, `cfg.get(`).
_CONTINUES_NAME = re.compile(r"\w|\s*\(")
_MISSING_KEY = re2.compile(r"KeyError: (?:'([^']+)'|\"([^\"]+)\")\s*$")
_MISSING_ATTRIBUTE = re2.compile(
    r"AttributeError: '([\w.]+)' object has no attribute '(\w+)'(?:\. Did you mean: '\w+'\?)?\s*$"
)
# Classes that hold a configuration as attributes (`'AttrDict' object has no attribute
# 'use_phonemes'`): whatever name the code gives it (`c.use_phonemes`), the read is a lookup in
# a configuration.
_CONFIG_CLASS = re.compile(
    r"(?:^|\.)(?:AttrDict|AttributeDict|EasyDict|edict|DotDict|DotMap|Munch|Box|ConfigDict"
    r"|DictConfig|Namespace|HParams|Hparams|HyperParams|Config)$"
)
# What a launcher puts before each line of its workers' output: torchrun's `[rank3]:`, Ray's
# `(TaskRunner pid=4671)` (one per level of nesting), a logger's `ERROR 09-15 13:02:43 [x.py:870]`.
_LOG_PREFIX = (
    r"(?:\[rank\d+\]:\s*"
    r"|\((?:[\w.-]+ )?pid=\d+(?:, ip=[\w.:-]+)?\)\s*"
    r"|[A-Z]+ \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[\w.-]+:\d+\]\s*)*"
)
# pytest marks the exception's lines with `E` (`E       TypeError: …`).
_EXCEPTION_LINE = re2.compile(
    r"^" + _LOG_PREFIX + r"[\s>|*`'\"]*(?:E\s+)?(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception))\b: "
)
_API_ERRORS = frozenset({"AttributeError", "ImportError", "KeyError", "TypeError", "NameError"})
# A submodule a package lacks (`No module named 'datasets.exceptions'`), and the package an
# installed frame belongs to (`…/site-packages/modelscope/…` is modelscope's).
_MISSING_SUBMODULE = re2.compile(r"No module named '([A-Za-z_]\w*)\.[\w.]+'")
_INSTALLED_PACKAGE = re2.compile(r"[/\\](?:site|dist)-packages[/\\]([A-Za-z_]\w*)")
_ABOUT_NONE = re2.compile(r"'NoneType' object")
_INSTALLED_CODE = re2.compile(r"[/\\](?:site|dist)-packages[/\\]|\btransformers_modules[/\\]")
_CODE_CONTEXT_LINES = 4  # a frame's source line, its ^^^ markers, a blank line
# A frame of a method Python calls for a lookup (`cfg['models']`, `cfg.models`): a key it
# cannot find was asked for by the frame above it.
_LOOKUP_METHOD_FRAME = re2.compile(r", in __(?:getitem|missing|getattr|getattribute)__\s*$")
EXCEPTION_REACH = 1000  # lines from the end where the exception that ends a run is looked for
# IPython/Jupyter/Colab tracebacks head a frame with the file and the function instead of
# `File "…", line N` (`File ~/env/…/deprecation.py:165, in wrapped_func(…)`,
# `[/usr/…/utils.py](https://localhost:8080/#) in generate(…)`, `~/…/modeling_x.py in chat(…)`)
# and print numbered source lines under it (`--> 165 return …`, `   1331 else:`, `...`).
_IPYTHON_FRAME = re2.compile(
    r"^\s*(?:File\s+)?\[?((?:[A-Za-z]:)?[~/\\][^\s\]]*\.py)(?::\d+)?\]?(?:\(\S*\))?,?\s+in\s+\S"
)
# pytest names the raising frame after the exception (`…/site-packages/x/fetch.py:116: TypeError`).
_PYTEST_LOCATION = re2.compile(r"^\s*(\S+\.py):\d+: (?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\s*$")
_PYTEST_REACH = 3  # the location line follows the `E` lines and a blank line
_IPYTHON_CONTEXT = re2.compile(r"^\s*(?:-*>\s*)?\d+(?:\s|$)|^\s*(?:\.\.\.|\(\.\.\.\))\s*$|^\s*$")
# A call whose arguments do not fit the callee's signature: Python raises it at the call site,
# so the frame says who called, not whose signature moved. With no frame in the tail at all
# (a pasted message), it is the drift lead's as much as a library frame's.
_CALL_SIGNATURE = re2.compile(
    r"TypeError: .*(?:[Uu]nexpected keyword argument"
    r"|missing \d+ required (?:positional|keyword-only) arguments?"
    r"|takes (?:from )?\d+ (?:to \d+ )?positional arguments? but \d+ (?:was|were) given"
    r"|got multiple values for (?:keyword )?argument)"
)
# An object of a named class used as a dict or a list (`'RunOptions' object does not support item
# assignment`): code written when that value was a dict or a list, against a release that
# made it an object. Built-in types are lower case; `NoneType` is a missing value instead.
_AS_A_CONTAINER = re2.compile(
    r"TypeError: '[A-Z]\w*' object (?:does not support item (?:assignment|deletion)"
    r"|is not subscriptable)"
)
# An attribute an object lacks, wherever the line goes on: its class and the attribute.
_LACKS_ATTRIBUTE = re2.compile(r"AttributeError: '([\w.]+)' object has no attribute '(\w+)'")
# A named class (`'Pipeline'`): built-in types are lower case, `NoneType` is a missing value;
# and one named with the module that defines it (`'tensorrt_bindings.tensorrt.IBuilderConfig'`),
# an installed package's object whatever name the job's code gives it (`self.config`).
_NAMED_CLASS = re.compile(r"[A-Z]\w*")
_QUALIFIED_CLASS = re.compile(r"([A-Za-z_]\w*)(?:\.\w+)*\.[A-Z]\w*")
# The function a call did not fit: `TypeError: Pipeline.run() got …` names `run`.
_CALLEE = re2.compile(r"TypeError: (?:[\w.]+\.)?(\w+)\(\)")
_DECORATION = "*`'\" \t>"
# The shell's prompt, pasted after the output: `$`, `user@host:~/run$`, `(venv) … #`.
_PROMPT = re.compile(r"^\s*(\(\S+\)\s*)?(\S+@\S+:\S*\s*)?[$#%>]\s*$")
# Python's report of code that does not parse, under the line it quotes (and its caret).
_SYNTAX_ERROR = re.compile(r"^\s*(?:SyntaxError|IndentationError|TabError)\b")
# What a build prints after one of its steps was killed, besides the failures it reports
# (`is_consequence`): CMake's wrapper of the killed nvcc call and the file it names, make
# waiting for the other jobs, ninja stopping, pip closing the subprocess's output.
_BUILD_FALLOUT = re.compile(
    r"^\s*Error generating file\s*$|^\s*[\w.~/\\-]+\.(?:o|obj|so)\s*$|Waiting for unfinished jobs"
    r"|\bbuild stopped: subcommand failed|^\s*\[end of output\]"
    r"|This error originates from a subprocess"
)


def reports_another_failure(line: str) -> bool:
    """True for a line that only reports a failure another line explains: a job's exit code,
    make's failed target (`is_consequence`), or a build's fallout from a killed step."""
    return is_consequence(line) or _BUILD_FALLOUT.search(line) is not None


def last_cause(tail: Tail, indices: Sequence[int]) -> int | None:
    """Of these lines, the one that best explains the failure: the last that says something
    and is not a report of another line's failure; else the bare `Killed` that make's and
    CMake's reports follow; else the last line that says something; else the last report."""
    telling = [i for i in indices if not tail.says_nothing(i)]
    causes = [i for i in telling if not reports_another_failure(tail.lines[i])]
    if causes:
        return causes[-1]
    killed = _bare_kill(tail)
    if killed in indices:
        return killed
    reports = [i for i in indices if reports_another_failure(tail.lines[i])]
    last = telling or reports
    return last[-1] if last else None


STAGE_LEAD_REASONS = {
    "build": gettext_noop("nothing else explains this build log, which fails at %(where)s"),
    "data": gettext_noop("nothing else explains this data preparation, which fails at %(where)s"),
    "train": gettext_noop("nothing else explains this training run, which fails at %(where)s"),
    "serve": gettext_noop("nothing else explains this serving log, which fails at %(where)s"),
}


@dataclass(frozen=True)
class Clue:
    """One evidence line for one incident, with the strength it lends."""

    line: int  # 0-based index into Tail.lines
    text: str
    kind: str  # signature | symptom | similar | trend | feedback | stage | kill | drift | config
    # | mismatch
    signature: str | None
    level: Level
    strength: float
    generic: bool
    specificity: float = 0.0
    similarity: float = 0.0
    repeats: int = 1
    source: str = ""  # what found it: a signature key, or similar/feedback and the line
    seen: str = ""  # for a trend: what the numbers did (a Phrase); for a stage lead: the stage
    lead_only: bool = False  # from a signature whose line has several usual causes
    echo: bool = False  # similar text found in an example line of the incident's signatures
    pattern: str = ""  # the signature's or symptom line's pattern that found it

    @property
    def faint(self) -> bool:
        """A log's similar text below SIMILARITY_FLOOR: it may fill an empty place among the
        leads, and never adds to another clue's incident."""
        return self.kind == "similar" and self.similarity < SIMILARITY_FLOOR

    def evidence(self) -> Evidence:
        return Evidence(self.line + 1, self.text, self.signature, self.kind)


def signature_clues(tail: Tail, hits: Sequence[Hit]) -> dict[str, list[Clue]]:
    """A clue for each signature hit, at the last line it matched.

    A signature that healthy logs show too (a few retried utterances, the loss scaler's
    first overflows) proves something only on an error line or in volume: below a flood, its
    clue is discounted by how far it is from one. A signature that only matched the code a
    SyntaxError quotes (`raise FileNotFoundError(path)` on the line that does not parse) read
    code that never ran: a lead at most.
    """
    volume: Counter[str] = Counter()
    for hit in hits:
        volume[hit.signature.key] += len(hit.lines)
    clues: dict[str, list[Clue]] = defaultdict(list)
    for hit in hits:
        index = hit.lines[-1]
        specificity = hit.signature.specificity
        generic = is_generic(hit.text) and not _telling_pattern(hit, specificity)
        strength = line_weight(tail, index, generic) * (0.65 + 0.35 * specificity)
        if hit.signature.benign_hits and tail.levels[index] is not Level.ERROR:
            strength *= BENIGN_FLOOR + (1.0 - BENIGN_FLOOR) * tail.flood_share(
                volume[hit.signature.key]
            )
        clues[hit.signature.slug].append(
            Clue(
                line=index,
                text=hit.text,
                kind=hit.signature.kind,
                signature=None if hit.signature.kind == "symptom" else hit.signature.key,
                level=tail.levels[index],
                strength=min(1.0, strength),
                generic=generic,
                specificity=specificity,
                repeats=tail.repeats(index),
                source=hit.signature.key,
                lead_only=hit.signature.lead_only
                or _quotes_code_only(tail, hit)
                or _tests_for_the_message(hit),
                pattern=hit.signature.pattern,
            )
        )
    return clues


def _quotes_code_only(tail: Tail, hit: Hit) -> bool:
    """Every line the signature matched is the code a SyntaxError quotes under its frame."""
    return all(
        i > 0
        and follows_frame(tail.lines[i - 1], tail.lines[i])
        and any(_SYNTAX_ERROR.match(line) for line in tail.lines[i + 1 : i + 4])
        for i in hit.lines
    )


# A source line that tests for an error's message (`if str(e) == "Cannot copy out of meta
# tensor; no data!":`), as a traceback prints it under its frame, IPython's numbered form too.
_TESTS_A_MESSAGE = re2.compile(
    r"^\s*(?:-*>\s*)?(?:\d+\s+)?(?:if|elif|while|assert)\b.*(?:==|!=|\bin\b|startswith\(|endswith\()"
)


def _tests_for_the_message(hit: Hit) -> bool:
    """The signature matched, on every line, inside a string that a line of code compares a
    message with: code that handles the failure, which the tail need not have met."""
    if hit.signature.kind != "signature" or not _TESTS_A_MESSAGE.search(hit.text):
        return False
    match = compiled(hit.signature.pattern).search(hit.text)
    if match is None:
        return False
    start = match.start()
    before = hit.text[:start].rstrip("\\")
    return before.endswith(("'", '"')) or hit.text[start : start + 1] in ("'", '"')


def _telling_pattern(hit: Hit, specificity: float) -> bool:
    """A catalog signature that demands a long literal ("wave.Error: unknown format: ",
    "AssertionError: 24000 vs 22050" spelled as its rates) tells what went wrong on a line
    whose own words say little, but not nothing (never on a frame or a traceback header)."""
    signature = hit.signature
    return (
        signature.kind == "signature"
        and not signature.lead_only
        and specificity >= 1.0
        and not is_generic(hit.text, enough=1)
    )


def similarity_clues(
    tail: Tail, index: SimilarityIndex, hits: Sequence[Hit] = ()
) -> dict[str, list[Clue]]:
    """Clues from text similarity between the tail's key lines and each incident's text
    (and, for a line no signature `hits`, each example line of the incidents' signatures)."""
    queries = similarity_queries(tail)
    floor = SIMILARITY_FLOOR if tail.is_description else LOG_SIMILARITY_FLOOR
    # A description is compared with what incidents say, not with the lines they were seen
    # with; a line a signature has read already, not with other incidents' example lines,
    # which would only echo that hit.
    read = {line for hit in hits for line in hit.lines}
    recognised = {
        number for number, line in enumerate(queries) if line in read or tail.is_description
    }
    clues: dict[str, list[Clue]] = defaultdict(list)
    lines = [tail.lines[line] for line in queries]
    for hit in index.best_matches(lines, top=10, without_examples=recognised):
        if hit.score < floor:
            continue
        line = queries[hit.query]
        clue = _similar_clue(tail, line, hit.score, kind="similar", source=f"similar:{line}")
        clues[hit.slug].append(replace(clue, echo=True) if hit.example else clue)
    return clues


def trend_clues(tail: Tail, index: SimilarityIndex) -> dict[str, list[Clue]]:
    """Clues from the tail's numbers and output: a training loss that is not coming down, a
    step time or latency that grows (a throughput that drops), generated text that loops,
    each matched by its wording against each incident's text. Only where no error line
    tells the story: next to one, the numbers are background."""
    if tail.telling_level is Level.ERROR:
        return {}
    clues: dict[str, list[Clue]] = defaultdict(list)
    findings = (
        ("trend:loss", loss_trend(tail.lines)),
        ("trend:speed", speed_trend(tail.lines)),
        ("trend:repetition", repetition(tail.lines)),
    )
    for source, trend in findings:
        if trend is None:
            continue
        # The trend's query is a sentence about it, to be compared with the incidents' texts.
        for hit in index.best_matches([trend.query], top=3, without_examples=(0,)):
            if hit.score >= SIMILARITY_FLOOR:
                clues[hit.slug].append(
                    _similar_clue(
                        tail, trend.line, hit.score, kind="trend", source=source, seen=trend.seen
                    )
                )
    return clues


def stage_clues(
    tail: Tail, clues: Mapping[str, Sequence[Clue]], incidents: Mapping[str, IncidentSpec]
) -> dict[str, list[Clue]]:
    """When the stage is clear, an error line says something and no incident has confirming
    evidence, the stage's lead incident (e.g. a build that failed) is offered as a lead, on
    the last telling error line: better than nothing, never confident. A tail whose error
    lines only report a failed step (`make: *** [all] Error 2` above a setup.py traceback)
    still failed at that step: the lead goes to the last of those."""
    if not tail.stage_clear or tail.is_description or _confirmed(tail, clues):
        return {}
    leads = [
        spec.slug for spec in incidents.values() if spec.stage_lead and spec.stage == tail.stage
    ]
    if not leads:
        return {}
    errors = [i for i, level in enumerate(tail.levels) if level is Level.ERROR]
    cause = last_cause(tail, errors)
    if cause is None:
        return {}
    return _leads(tail, cause, leads, kind="stage", seen=tail.stage or "")


def mismatch_clues(tail: Tail, incidents: Mapping[str, IncidentSpec]) -> dict[str, list[Clue]]:
    """When two of the tail's watchdog lines show ranks waiting at the same sequence number in
    a different operation or with a different number of elements, the incidents that
    explain it (`mismatch_lead`) are confirmed on the later line (`MISMATCH_STRENGTH`)."""
    leads = [spec.slug for spec in incidents.values() if spec.mismatch_lead]
    if tail.is_description or not leads:
        return {}
    seen: dict[str, tuple[str, str]] = {}
    for number, line in enumerate(tail.lines):
        if "SeqNum=" not in line:
            continue
        for work in _RANK_WORK.finditer(line):
            sequence, operation, size = work.group(1), work.group(2), work.group(3) or ""
            earlier = seen.setdefault(sequence, (operation, size))
            if earlier[0] != operation or (earlier[1] and size and earlier[1] != size):
                return _leads(tail, number, leads, kind="mismatch")
    return {}


def pin_clues(tail: Tail, incidents: Mapping[str, IncidentSpec]) -> dict[str, list[Clue]]:
    """When pip refuses a pinned release and every release it offers instead is newer, the
    incidents that explain it (`pin_lead`) are confirmed on pip's line (`PIN_STRENGTH`)."""
    leads = [spec.slug for spec in incidents.values() if spec.pin_lead]
    if tail.is_description or not leads:
        return {}
    for number in range(len(tail.lines) - 1, -1, -1):
        line = tail.lines[number]
        if "from versions:" not in line:
            continue
        refused = _REFUSED_PIN.search(line)
        if refused is not None and _offers_only_newer(refused.group(1), refused.group(2)):
            return _leads(tail, number, leads, kind="pin")
    return {}


def _offers_only_newer(pinned: str, offered: str) -> bool:
    """Whether pip offers at least one release and every one is newer than `pinned`
    (releases compared by their numbers: `1.11.0` is newer than `1.4`)."""
    wanted = _release(pinned)
    releases = [release for version in offered.split(",") if (release := _release(version))]
    return bool(wanted and releases) and all(release > wanted for release in releases)


def _release(version: str) -> tuple[int, ...]:
    """A version's release numbers without trailing zeros (`1.4.0` -> (1, 4)); () if none."""
    numbers = _RELEASE.search(version)
    if numbers is None:
        return ()
    release = [int(part) for part in numbers.group(1).split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    return tuple(release)


def kill_clues(
    tail: Tail, clues: Mapping[str, Sequence[Clue]], incidents: Mapping[str, IncidentSpec]
) -> dict[str, list[Clue]]:
    """When the tail ends in a bare `Killed` (the shell's report of a SIGKILL, as pasted: in
    bold or backticks too, before the shell's next prompt) and no incident has confirming
    evidence, the incidents that usually explain such a kill (`kill_lead`) are offered as a
    lead on that line."""
    leads = [spec.slug for spec in incidents.values() if spec.kill_lead]
    if tail.is_description or not leads:
        return {}
    killed = _bare_kill(tail)
    if killed is None or _confirmed(tail, clues, before=killed, errors_only=True):
        return {}
    return _leads(tail, killed, leads, kind="kill")


def _bare_kill(tail: Tail) -> int | None:
    """The line of the bare `Killed` the tail ends in, or that only the build's report of the
    killed step follows (make's and CMake's cascade, a wheel that failed to build)."""
    for i in range(len(tail.lines) - 1, -1, -1):
        line = tail.lines[i]
        if line.strip(_DECORATION) == "Killed":
            return i
        if line.strip() and not (_PROMPT.match(line) or reports_another_failure(line)):
            return None
    return None


def drift_clues(
    tail: Tail, clues: Mapping[str, Sequence[Clue]], incidents: Mapping[str, IncidentSpec]
) -> dict[str, list[Clue]]:
    """When the tail's last exception is an API error (AttributeError, ImportError, KeyError,
    TypeError, NameError) raised in a frame of installed code (site-packages, a model's
    remote code under transformers_modules; Python's frame layout or IPython's) and no
    incident has confirming evidence, the incidents that usually explain it (`drift_lead`)
    are offered as a lead on that line. So is a call that does not fit its callee's
    signature (`missing 1 required positional argument`) in a tail that shows no frame at all,
    or wherever it was raised when the callee is a private function (`_run_hydra()`) or a
    method of an object the failing line holds (`self.model.generate(*args)`); and, wherever it
    was raised, an object of a named class used as a dict or a list (`'RunOptions' object
    does not support item assignment`), or lacking a method the failing line calls on it
    (`pipeline.transcribe_batch(files)`: `'Pipeline' object has no attribute …`), or lacking
    any attribute when its class is named with a package's module
    (`'tensorrt_bindings.tensorrt.IBuilderConfig' object has no attribute …`); and a
    submodule missing from a package that another installed package imports
    (`_imports_anothers_submodule`)."""
    leads = [spec.slug for spec in incidents.values() if spec.drift_lead]
    last = _unexplained_exception(tail, clues, leads)
    if last is None:
        return {}
    exception = _EXCEPTION_LINE.search(tail.lines[last])
    path = _raising_frame(tail.lines, last)
    if _imports_anothers_submodule(tail.lines[last], path):
        return _leads(tail, last, leads, kind="drift")
    if exception.group(1) not in _API_ERRORS or _ABOUT_NONE.search(tail.lines[last]):
        return {}
    if path is not None and _INSTALLED_CODE.search(path):
        # record_clues or config_clues reads it first
        second = DRIFT_LEAD_STRENGTH * SECOND_READING_SHARE
        reads_the_jobs_own = _reads_a_record(tail, last) or _reads_the_jobs_config(tail, last)
        strength = second if reads_the_jobs_own else None
        return _leads(tail, last, leads, kind="drift", strength=strength)
    if _of_a_packages_class(tail.lines[last]):
        return _leads(tail, last, leads, kind="drift")
    if _AS_A_CONTAINER.search(tail.lines[last]):
        return _leads(tail, last, leads, kind="drift")
    lacking = _LACKS_ATTRIBUTE.search(tail.lines[last])
    if (
        lacking is not None
        and _NAMED_CLASS.fullmatch(lacking.group(1))
        and _calls_a_method(tail.lines, last, lacking.group(2))
    ):
        return _leads(tail, last, leads, kind="drift")
    callee = _CALLEE.search(tail.lines[last])
    if _CALL_SIGNATURE.search(tail.lines[last]) and (
        (callee is not None and _private(callee.group(1)))
        or (path is None and not any(_frame(line) for line in tail.lines))
        or (callee is not None and _calls_a_method(tail.lines, last, callee.group(1)))
    ):
        return _leads(tail, last, leads, kind="drift")
    return {}


def _imports_anothers_submodule(line: str, path: str | None) -> bool:
    """Whether `line` says a submodule is missing from a package (`No module named
    'datasets.exceptions'`) that installed code of another package imported (modelscope's
    `from datasets.exceptions import …`): that package was written against another release of
    the one it imports. A package missing its own submodule (`vllm._C`) is a broken install."""
    missing = _MISSING_SUBMODULE.search(line)
    importer = _INSTALLED_PACKAGE.search(path) if missing and path else None
    return importer is not None and importer.group(1) != missing.group(1)


def _of_a_packages_class(line: str) -> bool:
    """Whether `line` says an attribute is missing from an object of a class named with a
    package's module (`'tensorrt_bindings.tensorrt.IBuilderConfig' object`): that package's
    API, not the job's configuration. Not a configuration class of a library
    (`omegaconf.DictConfig`), nor one of Python's own (`types.SimpleNamespace`), which the job
    fills itself."""
    lacking = _LACKS_ATTRIBUTE.search(line)
    qualified = _QUALIFIED_CLASS.fullmatch(lacking.group(1)) if lacking else None
    return (
        qualified is not None
        and qualified.group(1) not in sys.stdlib_module_names
        and not _CONFIG_CLASS.search(qualified.group(0))
    )


def _private(name: str) -> bool:
    """A private function (`_run_hydra`): code calling another library's private API, which
    changes between releases without notice. Not a dunder such as `__init__`, mostly the
    caller's own."""
    return name.startswith("_") and not name.startswith("__")


def config_clues(
    tail: Tail, clues: Mapping[str, Sequence[Clue]], incidents: Mapping[str, IncidentSpec]
) -> dict[str, list[Clue]]:
    """When the tail's last exception is a KeyError or an AttributeError raised at a source
    line that looks that very key up in a configuration (`data_cfg["start_and_end"]`,
    `hparams.ter_eval`, or any name when the exception says the object is a configuration's
    class: `'AttrDict' object`), and no incident has confirming evidence, the incidents that
    usually explain it (`config_lead`) are offered as a lead on that line. Raised in the job's
    own code, they lead, and a missing attribute has the drift lead as its second reading;
    raised in an installed package on any object but a configuration's, or on an object of a
    class a package names as its own (`'tensorrt_bindings.tensorrt.IBuilderConfig' object`)
    wherever it was raised, they are the second reading after the drift lead
    (`SECOND_READING_SHARE`)."""
    leads = [spec.slug for spec in incidents.values() if spec.config_lead]
    last = _unexplained_exception(tail, clues, leads)
    if last is None:
        return {}
    lookup = _config_lookup(tail, last)
    if lookup is None:
        return {}
    path, of_a_config, an_attribute = lookup
    second = CONFIG_LEAD_STRENGTH * SECOND_READING_SHARE
    # A library reading a key the job's own configuration object lacks (`'Namespace' object
    # has no attribute …` in an installed trainer) is a configuration older than the code
    # that reads it; any other object's attribute in installed code, or an object of a class a
    # package names as its own, is a dependency that moved.
    if (_INSTALLED_CODE.search(path) or _of_a_packages_class(tail.lines[last])) and not of_a_config:
        return _leads(tail, last, leads, kind="config", strength=second)
    found = _leads(tail, last, leads, kind="config")
    if an_attribute:  # an attribute of a config object some library built
        drift = [spec.slug for spec in incidents.values() if spec.drift_lead]
        found.update(_leads(tail, last, drift, kind="drift", strength=second))
    return found


def _config_lookup(tail: Tail, exception: int) -> tuple[str, bool, bool] | None:
    """Where the KeyError or AttributeError on line `exception` was asked for by a source line
    that looks that very key up in a configuration: the file of that frame, whether the
    exception says the object is of a configuration's class, and whether it is an attribute."""
    of_a_config = an_attribute = False
    if missing := _MISSING_KEY.search(tail.lines[exception]):
        key = missing.group(1) or missing.group(2)
        lookups: tuple[str, ...] = (f"['{key}']", f'["{key}"]')
        if key.isidentifier():  # a dict read as attributes (`configs.dataset_conf.use_shm`)
            lookups += (f".{key}",)
    elif missing := _MISSING_ATTRIBUTE.search(tail.lines[exception]):
        lookups = (f".{missing.group(2)}",)
        of_a_config = bool(_CONFIG_CLASS.search(missing.group(1)))
        an_attribute = True
    else:
        return None
    path = next(
        (
            frame
            for frame, source in _asking_frames(tail.lines, exception)
            if any(_looks_up_in_config(line, lookups, of_a_config) for line in source)
        ),
        None,
    )
    return None if path is None else (path, of_a_config, an_attribute)


def record_clues(
    tail: Tail, clues: Mapping[str, Sequence[Clue]], incidents: Mapping[str, IncidentSpec]
) -> dict[str, list[Clue]]:
    """When the tail's last exception is a KeyError raised at a source line that reads that
    key from one record of the data (`example["messages"]`, `self.data[index]['text']`), and no
    incident has confirming evidence, the incidents that usually explain it (`record_lead`) are
    offered as a lead on that line, wherever it was raised: the job's own dataset class or an
    installed trainer, both read the user's data."""
    leads = [spec.slug for spec in incidents.values() if spec.record_lead]
    last = _unexplained_exception(tail, clues, leads)
    if last is None or not _reads_a_record(tail, last):
        return {}
    return _leads(tail, last, leads, kind="record")


def _reads_a_record(tail: Tail, exception: int) -> bool:
    """Whether the KeyError on line `exception` was raised by a source line, in a frame's few
    lines above it, that reads its key from one record of a dataset."""
    missing = _MISSING_KEY.search(tail.lines[exception])
    if missing is None or _raising_frame(tail.lines, exception) is None:
        return False
    key = missing.group(1) or missing.group(2)
    lookups = (f"['{key}']", f'["{key}"]')
    source = tail.lines[max(0, exception - _CODE_CONTEXT_LINES) : exception]
    return any(_looks_up_in_record(line, lookups) for line in source)


def _reads_the_jobs_config(tail: Tail, exception: int) -> bool:
    """Whether the key or attribute the exception on line `exception` misses was asked of the
    job's own configuration: by a configuration lookup in the job's code (through a
    configuration library's lookup methods: mmengine's `Config.__missing__`), or, wherever it
    was read, from an object of a configuration's class (`'Namespace' object`)."""
    lookup = _config_lookup(tail, exception)
    if lookup is None:
        return False
    path, of_a_config, _ = lookup
    return of_a_config or not _INSTALLED_CODE.search(path)


def _unexplained_exception(
    tail: Tail, clues: Mapping[str, Sequence[Clue]], leads: Sequence[str]
) -> int | None:
    """The line of the tail's last exception, when there are leads to offer for it: the tail
    is a log, not a description, and no incident has confirming evidence."""
    if not leads or tail.is_description or _confirmed(tail, clues):
        return None
    return _last_exception(tail)


def _last_exception(tail: Tail) -> int | None:
    """The last error line that names a Python exception (`KeyError: …`), if any, among the
    tail's last EXCEPTION_REACH lines: what ends a run is near its end, and a paste of
    thousands of error lines with no exception is not read line by line twice."""
    last = len(tail.lines) - 1
    errors = (
        i for i in range(last, max(-1, last - EXCEPTION_REACH), -1) if tail.levels[i] is Level.ERROR
    )
    return next((i for i in errors if _EXCEPTION_LINE.search(tail.lines[i])), None)


# A subscript's name is read from this many characters before it, and a line's first few
# lookups of the key are looked at: a source line is short, and a pasted one may not be.
_NAME_REACH = 200
_LOOKUPS_READ = 8


def _looks_up_in_config(code: str, lookups: Sequence[str], of_a_config: bool = False) -> bool:
    """Whether `code` looks a configuration-like name up with one of `lookups` (a subscript
    with the key, or the attribute read; not a method called); any name, when the exception
    says the object is `of_a_config` class."""
    for lookup, start in _occurrences(code, lookups):
        if lookup.startswith(".") and _CONTINUES_NAME.match(code, start + len(lookup)):
            continue
        name = _SUBSCRIPTED.search(code[max(0, start - _NAME_REACH) : start])
        if name and (of_a_config or _CONFIG_NAME.search(name.group(1))):
            return True
    return False


def _looks_up_in_record(code: str, lookups: Sequence[str]) -> bool:
    """Whether `code` subscripts one record of a dataset with one of `lookups`: a record's
    name (`example`, `raw_sample`) or an element taken by its index (`self.data[index]`)."""
    for _, start in _occurrences(code, lookups):
        before = code[max(0, start - _NAME_REACH) : start]
        name = _SUBSCRIPTED.search(before)
        if _INDEXED.search(before) or (name and _RECORD_NAME.search(name.group(1))):
            return True
    return False


def _occurrences(code: str, lookups: Sequence[str]) -> Iterator[tuple[str, int]]:
    """Each of `lookups` and where it starts in `code`, its first `_LOOKUPS_READ` times."""
    for lookup in lookups:
        start = code.find(lookup)
        for _ in range(_LOOKUPS_READ):
            if start == -1:
                break
            yield lookup, start
            start = code.find(lookup, start + 1)


def _frame(line: str) -> str | None:
    """The file a traceback frame names, in Python's or IPython's layout; None for another line."""
    found = frame_path(line)
    if found:
        return found
    ipython = _IPYTHON_FRAME.search(line)
    return ipython.group(1) if ipython else None


def _calls_a_method(lines: Sequence[str], exception: int, callee: str) -> bool:
    """Whether the source line the call failed on calls `callee` as a method of an object it
    holds (`self.model.generate(*args)`, `pipe.run(x=1)`): one component calling another's
    API, which moves between their releases. A call of a bare function (`build(cfg)`) is
    mostly the job's own code calling itself."""
    call = f".{callee}("
    return any(call in line for line in lines[max(0, exception - _CODE_CONTEXT_LINES) : exception])


def _asking_frames(lines: Sequence[str], exception: int) -> Iterator[tuple[str, Sequence[str]]]:
    """The frame that raised the exception on line `exception` (its file and its few lines of
    source), then, while a frame is a lookup method (`__getitem__`, `__missing__`,
    `__getattr__` of a configuration class: mmengine's Config, an AttrDict), the frame that
    called it: the key a lookup method did not find was asked for by its caller's line."""
    path = _raising_frame(lines, exception)
    if path is None:
        return
    yield path, lines[max(0, exception - _CODE_CONTEXT_LINES) : exception]
    header = _frame_above(lines, exception)
    while header is not None and _LOOKUP_METHOD_FRAME.search(lines[header]):
        caller = _frame_above(lines, header)
        if caller is None:
            return
        yield frame_path(lines[caller]) or path, lines[caller:header]
        header = caller


def _frame_above(lines: Sequence[str], index: int) -> int | None:
    """The line of the Python frame header within a frame's few lines above line `index`."""
    return next(
        (
            i
            for i in range(index - 1, max(-1, index - 1 - _CODE_CONTEXT_LINES), -1)
            if frame_path(lines[i])
        ),
        None,
    )


def _raising_frame(lines: Sequence[str], exception: int) -> str | None:
    """The file of the frame right above the exception line: within a frame's few lines of
    source, or an IPython frame past any number of its numbered source lines; in pytest's
    layout, the location line right below it."""
    for index in range(exception + 1, min(len(lines), exception + 1 + _PYTEST_REACH)):
        if pytest := _PYTEST_LOCATION.search(lines[index]):
            return pytest.group(1)
    for distance, index in enumerate(range(exception - 1, -1, -1), 1):
        if distance <= _CODE_CONTEXT_LINES and (path := _frame(lines[index])):
            return path
        if distance > _CODE_CONTEXT_LINES and (ipython := _IPYTHON_FRAME.search(lines[index])):
            return ipython.group(1)
        if distance >= _CODE_CONTEXT_LINES and not _IPYTHON_CONTEXT.search(lines[index]):
            return None
    return None


_LEAD_STRENGTH = {
    "stage": STAGE_LEAD_STRENGTH,
    "kill": KILL_LEAD_STRENGTH,
    "drift": DRIFT_LEAD_STRENGTH,
    "config": CONFIG_LEAD_STRENGTH,
    "record": RECORD_LEAD_STRENGTH,
    "mismatch": MISMATCH_STRENGTH,
    "pin": PIN_STRENGTH,
}


def _confirmed(
    tail: Tail,
    clues: Mapping[str, Sequence[Clue]],
    before: int | None = None,
    *,
    errors_only: bool = False,
) -> bool:
    """Whether some incident already has evidence that confirms it (on a line before `before`,
    when given; on an error line, when `errors_only`: a warning the job ran past did not stop
    it): then no lead is offered."""
    confirming = tail.confirming_kinds()
    return any(
        clue.kind in confirming
        and not clue.lead_only
        and (before is None or clue.line < before)
        and (not errors_only or tail.levels[clue.line] is Level.ERROR)
        for found in clues.values()
        for clue in found
    )


def _leads(
    tail: Tail,
    line: int,
    slugs: Sequence[str],
    *,
    kind: str,
    seen: str = "",
    strength: float | None = None,
) -> dict[str, list[Clue]]:
    """The lead incidents of `kind`, each offered on `line` (as strong as the kind's leads
    are, unless told)."""
    clue = Clue(
        line=line,
        text=tail.lines[line],
        kind=kind,
        signature=None,
        level=tail.levels[line],
        strength=_LEAD_STRENGTH[kind] if strength is None else strength,
        generic=False,
        source=kind,
        seen=seen,
    )
    return {slug: [clue] for slug in slugs}


def _similar_clue(
    tail: Tail, line: int, cosine: float, *, kind: str, source: str, seen: str = ""
) -> Clue:
    calibrated = SIMILARITY_WEIGHT * min(
        1.0, (cosine - SIMILARITY_FLOOR) / (SIMILARITY_CEILING - SIMILARITY_FLOOR)
    )
    if cosine < SIMILARITY_FLOOR:  # a log's faint lead: above nothing, below all similar text
        calibrated = SIMILARITY_WEIGHT * LOG_LEAD_SHARE * cosine / SIMILARITY_FLOOR
    return Clue(
        line=line,
        text=tail.lines[line],
        kind=kind,
        signature=None,
        level=tail.levels[line],
        strength=min(1.0, calibrated * line_weight(tail, line, generic=False)),
        generic=False,
        similarity=cosine,
        repeats=tail.repeats(line),
        source=source,
        seen=seen,
    )


def similarity_queries(tail: Tail) -> list[int]:
    """The lines worth comparing with the incidents' text: the latest distinct errors, then
    flooding warnings, then other warnings. In a description typed by a person ("显存不足",
    "WER up 2 points after a rerun") every line counts; in a log without any warning or
    error only its last few lines do, since healthy INFO lines would only add noise, and none
    when it ends in a bare `Killed`: what the job was doing says nothing about why it was
    killed (`kill_clues` reads that). Each group is asked once, through its last line; lines
    that say nothing are left out."""
    latest_first = sorted(tail.groups, key=lambda found: -found.last_line)
    chosen: list[int] = []

    def take(groups: Iterable[Group], limit: int, *, successes: bool = True) -> None:
        for found in groups:
            if len(chosen) >= limit:
                return
            index = found.last_line - 1
            if index in chosen or tail.says_nothing(index) or is_table_row(tail.lines[index]):
                continue
            if not successes and reports_success(tail.lines[index]):
                continue
            chosen.append(index)

    def at(level: Level) -> list[Group]:
        return [found for found in latest_first if found.level is level]

    take(at(Level.ERROR), SIMILARITY_QUERIES)
    take((found for found in latest_first if found.flood), SIMILARITY_QUERIES)
    take(at(Level.WARNING), SIMILARITY_QUERIES if not chosen else len(chosen))
    if tail.is_description:
        take(latest_first, DESCRIPTION_LINES)
    elif not chosen and _bare_kill(tail) is None:
        take(latest_first, LAST_LINES_ASKED, successes=False)
    return sorted(chosen)


def feedback_clues(
    tail: Tail, feedback: Mapping[tuple[str, str], float] | None
) -> dict[str, list[Clue]]:
    """Clues for incidents that users confirmed as the fix for one of this tail's error or
    warning templates, so "this fixed it" teaches the engine even where no signature
    matches yet. Each group is looked at through its first and last line."""
    if not feedback:
        return {}
    by_template: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (template, slug), value in feedback.items():
        if value > 0:
            by_template[template].append((slug, value))
    clues: dict[str, list[Clue]] = defaultdict(list)
    for found in tail.groups:
        if found.level is Level.INFO:
            continue
        for index in {found.first_line - 1, found.last_line - 1}:
            for slug, value in by_template.get(tail.template(index), ()):
                generic = is_generic(tail.lines[index])
                weight = line_weight(tail, index, generic)
                strength = min(1.0, value) * FEEDBACK_CLUE_WEIGHT * weight
                clues[slug].append(
                    Clue(
                        line=index,
                        text=tail.lines[index],
                        kind="feedback",
                        signature=None,
                        level=tail.levels[index],
                        strength=strength,
                        generic=generic,
                        source=f"feedback:{tail.template(index)}",
                    )
                )
    return clues
