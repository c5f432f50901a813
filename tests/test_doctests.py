"""The examples in the docstrings of every module of the `scoreboard` package, run as tests.

Every module is imported (an import error fails, it is never skipped) and every example in it must pass.
"""

import doctest
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest

import scoreboard
import testing


def all_modules() -> list[str]:
    names = ["scoreboard"]
    for info in pkgutil.walk_packages(scoreboard.__path__, prefix="scoreboard."):
        names.append(info.name)
    return sorted(names)


# `python -m scoreboard` runs the command line when imported: its source is read instead of imported.
RUN_ON_IMPORT = {"scoreboard.__main__"}
MODULES = [name for name in all_modules() if name not in RUN_ON_IMPORT]


@pytest.mark.parametrize("name", sorted(RUN_ON_IMPORT))
def test_modules_that_run_on_import_hold_no_examples(name):
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    source = Path(spec.origin).read_text()
    assert doctest.DocTestParser().get_examples(source) == [], f"{name} has examples that cannot run: move them"


def test_every_package_is_walked():
    # walk_packages reports a subpackage it cannot import through onerror only; make sure the known ones are here.
    assert {"scoreboard.roads", "scoreboard.service", "scoreboard.cli"} <= set(MODULES)
    assert {"scoreboard.play", "scoreboard.cards", "scoreboard.odds", "scoreboard.roads.grid"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_module_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = finder.find(module, name)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (output above)"


def test_the_core_has_examples():
    # The contract asks for examples on the core's pure functions: a module that loses all of them shows here.
    attempted = {}
    for name in MODULES:
        tests = doctest.DocTestFinder(exclude_empty=True).find(importlib.import_module(name), name)
        attempted[name] = sum(len(t.examples) for t in tests)
    assert sum(attempted.values()) > 0
    with_examples = {name for name, n in attempted.items() if n}
    assert {"scoreboard.i18n", "scoreboard.palette"} <= with_examples, attempted


# Modules whose examples other tests relied on (they ran them again themselves before): each must keep some.
HAVE_EXAMPLES = [
    "scoreboard.cli.replay",
    "scoreboard.commitment",
    "scoreboard.service.feeds.drivers",
    "scoreboard.service.feeds.keypad",
    "scoreboard.service.feeds.line_protocol",
    "scoreboard.service.web.api.history",
]


@pytest.mark.parametrize("name", HAVE_EXAMPLES)
def test_the_modules_said_to_have_examples_have_them(name):
    tests = doctest.DocTestFinder(exclude_empty=True).find(importlib.import_module(name), name)
    assert sum(len(t.examples) for t in tests) > 0, f"{name} lost its examples"


@pytest.mark.parametrize(
    "name", sorted(info.name for info in pkgutil.walk_packages(testing.__path__, prefix="testing."))
)
def test_the_test_support_examples(name):
    # The package the tests and bench/ share keeps its examples too (the raw WebSocket frames' parsing).
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (output above)"
