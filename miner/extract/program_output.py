"""Program output pasted into a conversation: exceptions, stack frames, test runners' reports, compiler
errors, a script's metric printout.

Somebody's program said it; nobody decided or stated it, so the "output"
step of `refine.Refiner` drops a unit for which `is_output` holds. Plain
patterns on the text, no spaCy: the miner's unit filter uses them too.
"""

from __future__ import annotations

import re

# Program output pasted into the conversation: an exception line, a stack frame, a Ruby hash dump, git's
# branch report, a test runner's counts or failures, a compiler error, a JSON log line. Somebody's program
# said it; nobody decided or stated it.
_OUTPUT_RE = re.compile(
    r"^\s*\{\"[\w-]+\":|^\s*not ok \d+\b|\berror TS\d{4}:|"
    r"^\W{0,3}(?:(?:Uncaught\s+(?:\(in promise\)\s+)?)?[\w.]*(?:Error|Exception)\b:|Traceback \(most recent call last\)|npm ERR!|\[(?:new branch|new tag|"
    r"deleted|rejected)\])|(?:'[^']*'|\"[^\"]*\")\s*=>\s*[\[{'\"\d]|^\s*at [\w.$<>]+ \(\S*:\d+|"
    r"(?i:\b\d+ (?:examples?|tests?|failures?|errors?|passed|failed)\b,?\s*(?:and\s+)?\d+ (?:other\s+)?"
    r"(?:examples?|tests?|failures?|errors?|passed|failed|skipped)\b)")
# Stack frames and crash reports of other runtimes, and test runners' failure lines: Python ('File "x.py", line 9'),
# IPython ("File ~/x.py:95, in read_csv", "Cell In[3], line 5", "---> 95 df = read()"), Rust ("thread 'main'
# panicked at", "--> src/main.rs:5:9"), Go ("goroutine 1 [running]:", "main.go:12 +0x1d"), Java ("Caused by: …", "at a.B.c(B.java:42)",
# "... 12 more"), .NET ("at A.B() in C:\x.cs:line 9"), pytest ("E   assert …", "FAILED tests/x.py::t",
# "x.py:12: in f"), Python warnings ("DeprecationWarning: …").
_TRACE_RE = re.compile(  # one anchored alternation: `match` tries the start of the unit only
    r"\s*(?:File \"[^\"\n]+\", line \d+|File \S+:\d+(?:, in \S|\s*$)|(?:Cell|Input) In\s*\[\d*\]|"
    r"-{2,}>\s*\d+\s|-->\s+\S+:\d+(?::\d+)?\s*$|thread '[^'\n]*' panicked at\b|note: run with `RUST_BACKTRACE|"
    r"error\[E\d{4}\]:|\d+: (?:0x[0-9a-f]+ - )?[\w<>$]+::[\w<>${}:]+|at \S+\.\w+:\d+(?::\d+)?\s*$|"
    r"goroutine \d+ \[[^\]\n]+\]:|panic: \S|\S+\.go:\d+(?: \+0x[0-9a-f]+)?\s*$|exit status \d+\s*$|"
    r"Caused by: [\w.$]+|Exception in thread \"|"
    r"at [\w.$<>/]+\((?:[\w.$ -]+\.(?:java|kt|kts|scala|groovy|clj):\d+|Native Method|Unknown Source)\)|"
    r"\.\.\. \d+ (?:more|common frames omitted)\s*$|at [\w.<>`\[\], ]+\(.*\) in \S.*:line \d+|"
    r"E\s+(?:assert\b|[\w.]*(?:Error|Exception|Warning)\b|[+\-?]\s|where\b|and\b|At index\b|Left contains|"
    r"Right contains|Full diff|Use -v|Omitting\b|Differing items)|"
    r"(?:FAILED|ERROR|PASSED|XFAIL|XPASS|SKIPPED)\s+[\w/.\-\[\]]+(?:::|\.py\b)|"
    r"[\w/.\-]+\.py:\d+: (?:in \w|[\w.]*(?:Error|Exception|Warning)\b)|collected \d+ items?\b|"
    r"=+ .*\bin \d+(?:\.\d+)?s\b|\W{0,3}[\w.]*\wWarning: )")

# A log line: a time stamp first, then who wrote it or how bad it is. Syslog and journalctl ("Mar 03 14:22:05 host
# sshd[2210]: …"), an ISO stamp and a level ("2024-03-03 14:22:05,120 ERROR …", "[2024-03-03T14:22:05Z] [warn] …"),
# logfmt ("time=… level=error msg=…").
_LOG_LINE_RE = re.compile(
    r"\s*(?:(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* +\d{1,2} \d{2}:\d{2}:\d{2} \S+ "
    r"[\w.@/-]+(?:\[\d+\])?: |"
    r"\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?,?\s+[\[(]?"
    r"(?i:trace|debug|info|notice|warn|warning|error|err|fatal|critical|crit|severe)[\])]?(?![\w-])|"
    r"(?:time|ts)=\S+\s+level=\w+)")


def _is_trace(text: str) -> bool:
    return _TRACE_RE.match(text) is not None or "<ipython-input-" in text


# A numbered line of code, as IPython and debuggers print the lines around a frame ("93 kwds.update(defaults)",
# "94 def read(path):", "95 import pandas as pd"): a number, then something no sentence starts with.
_NUMBERED_CODE_RE = re.compile(
    r"^\s*\d{1,5}\s+(?:(?:async\s+)?def\s+\w+\s*\(|class\s+\w+\s*[(:]|"
    r"(?:return|raise|yield|assert|await)(?:\s+[\w.]+(?:\(|\s*[,=<>!]=?|\s*$)|\s*$)|"
    r"import\s+[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+)*\s*$|from\s+[\w.]+\s+import\s|"
    r"(?:if|elif|while|for|with|try|except|finally|else)\b.*:\s*$|[\w.\[\]'\"]+\s*[-+*/%|&]?=(?!=)\s*\S|[\w.]+\()")
_NUMBERED_LINE_RE = re.compile(r"^\s*\d{1,5}\s+\S")
# A line a script prints about its results: "label: number", nothing more ("Accuracy: 0.9312", "- Label: 15.86%").
_METRIC_LINE_RE = re.compile(
    r"^\s*(?:[-*+•]\s+)?(?P<label>[^\W\d][\w .\-/()@#']{0,48}?)\s*[:=]\s*"
    r"(?P<value>[-+]?\d+(?:\.\d+)?)\s*(?P<percent>%)?(?:\s*(?:±|\+/-|\+-)\s*\d+(?:\.\d+)?\s*%?)?"  # 0.93 ± 0.02
    r"\s*(?:[a-zA-Zµ]{1,4}(?:/[a-zA-Z]{1,4})?)?\s*(?:\([^)\n]{0,30}\))?\s*[.,;]?\s*$")  # a unit, a note: "ms", "(macro)"
# Several "label: decimal" pairs on one line ("loss: 0.2345 - accuracy: 0.9312", "precision=0.91, recall=0.87").
_METRIC_PAIR_RE = re.compile(r"(?<![\w.])[^\W\d][\w\-/]*\s*[:=]\s*[-+]?\d+\.\d+%?")
# Labels of a value somebody chose, not measured: such a line is a decision ("Coverage target: 80.5%").
_CHOSEN_VALUE_RE = re.compile(
    r"(?i)\b(?:target|goal|threshold|limit|budget|max|maximum|min|minimum|cap|ceiling|floor|slo|sla|at least|at most|"
    r"should|must|keep|default|set|use|expected|required|desired|minimal|maximal)\b")
# Labels of a measurement: with any decimal value the line is a script's report ("Accuracy: 0.93").
_MEASURE_LABEL_RE = re.compile(
    r"(?i)\b(?:accuracy|acc|precision|recall|f1(?:[-_ ]?score)?|auc|roc[-_ ]?auc|loss|mse|rmse|mae|mape|r2|r²|bleu|"
    r"rouge[\w-]*|perplexity|iou|map(?:@\d+)?|ndcg(?:@\d+)?|top-?\d+(?: acc\w*)?|score|error rate|std|stdev|mean|"
    r"median|avg|average|throughput|elapsed|wall time|cpu time|"
    r"(?:val|train|test|eval)[_ ]?(?:loss|acc\w*|f1|auc|score|error|mae|mse|rmse|precision|recall))\b")


def _significant_digits(value: str) -> str:
    return value.lstrip("+-").replace(".", "").lstrip("0").rstrip("0")


def _round_figure(value: str) -> bool:
    """A value a person picks (0.25, 0.001, 1.5, 12.5), not one a program prints (0.9312, 15.86)."""
    digits = _significant_digits(value)
    return len(digits) <= 1 or (len(digits) <= 3 and digits.endswith("5"))


def _metric(text: str) -> re.Match | None:
    """A "label: decimal number" line whose label does not name a chosen value (a target, a limit, a default)."""
    found = _METRIC_LINE_RE.match(text)
    if found is None or "." not in found.group("value") or _CHOSEN_VALUE_RE.search(found.group("label")):
        return None
    return found


def _printed_fraction(found: re.Match) -> bool:
    """A share as programs print them: a percentage with decimals, or a fraction below 1 with two or more."""
    value = found.group("value")
    whole, _, decimals = value.lstrip("+-").partition(".")
    return not _round_figure(value) and (bool(found.group("percent")) or (whole == "0" and len(decimals) >= 2))


def is_metric_printout(text: str, previous: str = "") -> bool:
    """A script's report of its results ("Accuracy: 0.9312", "- Label: 15.86%", "loss: 0.23 - acc: 0.91").

    A single "label: number" line is ambiguous ("Timeout: 30", "- Coverage target: 80%", "- Node: 20.11"
    are decisions), so it counts only when its shape is clearly a program's: several "label: decimal"
    pairs on one line; a measurement's label (accuracy, loss, F1, mean…) with a decimal value; a
    percentage with two or more decimals; three or more decimals that are not a round figure; or, right
    after another "label: decimal" line (`previous`: the only sibling refinement sees), a share that is
    not round (0.87, 15.8%). Integers never count, and a label that names a chosen value (target, limit,
    threshold, default…) keeps the line whatever its number.
    """
    if ":" not in text and "=" not in text:
        return False
    if len(_METRIC_PAIR_RE.findall(text)) >= 2 and not _CHOSEN_VALUE_RE.search(text):
        words_left = [w for w in _METRIC_PAIR_RE.sub(" ", text).split() if any(c.isalpha() for c in w)]
        if len(words_left) <= 2:  # nothing but the pairs, and perhaps "Epoch 3/10"
            return True
    found = _metric(text)
    if found is None:
        return False
    value = found.group("value")
    decimals = len(value.partition(".")[2])
    if _MEASURE_LABEL_RE.search(found.group("label")):
        return True
    if not _round_figure(value) and (decimals >= 3 or (found.group("percent") and decimals >= 2)):
        return True
    return bool(previous) and _metric(previous) is not None and _printed_fraction(found)


def is_output(text: str, previous: str = "") -> bool:
    """Program output pasted into the conversation ("AssertionError: …", "at foo (x.ts:9:1)", "[new branch] …",
    a traceback's frames and code lines, a log line, a script's metric printout).

    `previous` is the unit before this one: a numbered line right after a traceback line is one of its
    code lines, and a metric line after another is one of a printout's.
    """
    if _OUTPUT_RE.search(text) or _is_trace(text) or _NUMBERED_CODE_RE.match(text) or _LOG_LINE_RE.match(text):
        return True
    if previous and _NUMBERED_LINE_RE.match(text) and (_is_trace(previous) or _NUMBERED_CODE_RE.match(previous)):
        return True
    return is_metric_printout(text, previous)
