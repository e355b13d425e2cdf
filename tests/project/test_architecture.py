"""The layers of docs/ARCHITECTURE.md, checked on the source (issue 18).

Every import of every module of pbem is read (at the top or inside a
function; not those under ``if TYPE_CHECKING``), and two things must hold:
no module imports itself back through others (no import loop), and each
layer imports only the layers below it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pbem"

# layer -> the layers of pbem it may import (besides itself and pbem.vocab,
# pbem.paths, which every layer may use)
ALLOWED: dict[str, set[str]] = {
    "rules": set(),
    "maps": {"rules"},  # map files and importers: the I/O the pure rules layer leaves out
    "orders": {"rules", "maps"},
    "orderlog": {"rules", "orders", "maps"},  # order log, replay, records, verify: pure data
    "store": set(),
    "mail": set(),
    "report": {"rules", "orders", "maps"},
    "service": {"rules", "maps", "orders", "orderlog", "report", "store", "mail", "config"},
    "config": {"mail"},
    "site": {"rules", "maps", "orders", "orderlog", "report", "store", "mail", "config", "service"},
    "cli": {
        "rules",
        "maps",
        "orders",
        "orderlog",
        "report",
        "store",
        "mail",
        "config",
        "service",
        "site",
    },
    "entry": {"rules", "orderlog", "cli"},  # `pbem odds` and `pbem verify` answer before typer
    # what tests, benchmarks and scripts use; nothing above imports it
    "testing": {"rules", "maps", "orders", "report", "store", "mail", "config", "service"},
}
# (native: whether the compiled rules engine is used; imports no layer)
SHARED = {"vocab", "paths", "native", "__init__", "__main__"}


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imports_of(path: Path, known: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                if sub in known:
                    found.add(sub)  # a submodule, not the package's own code
                elif node.module in known:
                    found.add(node.module)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(path, known) - {name} for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def layer(module: str) -> str:
    return module.split(".")[1] if "." in module else "__init__"


def test_the_log_layer_reaches_neither_store_nor_service() -> None:
    """pbem/orderlog/ replays and verifies from data alone: no database, no mail."""
    below = {layer(t) for m, ts in graph().items() if layer(m) == "orderlog" for t in ts}
    assert below <= {"orderlog", "rules", "orders", "maps"} | SHARED
    assert "pbem.orderlog.replay" in graph()["pbem.service.play.archive"]


def test_no_import_loops() -> None:
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_a_loop() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_each_layer_imports_only_the_layers_below_it() -> None:
    wrong = []
    for module, targets in sorted(graph().items()):
        own = layer(module)
        if own in SHARED:
            continue
        for target in sorted(targets):
            other = layer(target)
            if other != own and other not in SHARED and other not in ALLOWED[own]:
                wrong.append(f"{module} imports {target}")
    assert wrong == []


def test_no_runtime_module_imports_the_testing_package() -> None:
    """pbem.testing needs the test extra (aiosmtpd): the product must not load it."""
    wrong = [
        f"{module} imports {target}"
        for module, targets in sorted(graph().items())
        if layer(module) != "testing"
        for target in sorted(targets)
        if layer(target) == "testing"
    ]
    assert wrong == []


def test_the_testing_package_holds_the_test_only_modules() -> None:
    known = modules()
    assert {"pbem.testing.mailservers", "pbem.testing.sample"} <= set(known)
    assert "pbem.mail.devservers" not in known and "pbem.report.sample" not in known


def test_the_command_line_runs_no_sql() -> None:
    """pbem/cli/ is thin: the queries are the service's."""
    wrong = []
    for name, path in sorted(modules().items()):
        if layer(name) != "cli":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                found = [node.module or ""]
            else:
                continue
            wrong += [f"{name} imports {n}" for n in found if n.split(".")[0] in SQL]
    assert wrong == []


SQL = {"sqlmodel", "sqlalchemy"}
RAW_COMPARE = re.compile(r"""\b(status|phase|outcome) (==|!=|in|not in) \(?["']""")


def test_statuses_and_phases_are_compared_as_enums() -> None:
    """service/, store/, report/, cli/, site/ name statuses and phases (pbem/vocab.py,
    rules/state.py), never compare them to a raw string."""
    wrong = []
    for name, path in sorted(modules().items()):
        if layer(name) not in ("service", "store", "report", "cli", "site"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if RAW_COMPARE.search(line):
                wrong.append(f"{path.name}:{number}: {line.strip()}")
    assert wrong == []


def test_the_raw_compare_finder_finds_one() -> None:
    assert RAW_COMPARE.search('if game.phase == "over":')
    assert RAW_COMPARE.search("if state.phase in ('claim', 'place'):")
    assert not RAW_COMPARE.search("if game.phase == GamePhase.OVER:")


# what reads or writes outside the process: a module of rules/ names none of these
IO_NAMES = {"open", "Path", "read_text", "read_bytes", "write_text", "write_bytes", "glob"}
IO_MODULES = {"pathlib", "os", "io", "shutil", "tempfile", "PIL", "pbem.paths"}


def io_uses(path: Path) -> list[str]:
    """Every name or import in a module that would do I/O, as 'line: name'."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name) and node.id in IO_NAMES:
            found.append(f"{node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in IO_NAMES:
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: import {a.name}"
                for a in node.names
                if a.name.split(".")[0] in IO_MODULES or a.name in IO_MODULES
            ]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and (node.module.split(".")[0] in IO_MODULES or node.module in IO_MODULES)
        ):
            found.append(f"{node.lineno}: from {node.module}")
    return sorted(found)


def test_the_rules_layer_does_no_io() -> None:
    """Maps and presets are handed to rules/ as text or data (pbem.maps reads them)."""
    wrong = {
        str(path.relative_to(PACKAGE)): uses
        for path in sorted((PACKAGE / "rules").glob("*.py"))
        if (uses := io_uses(path))
    }
    assert wrong == {}


def test_the_io_check_sees_a_file_read(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from pathlib import Path\nx = Path('a').read_text()\n", encoding="utf-8")
    assert io_uses(module) == ["1: from pathlib", "2: .read_text", "2: Path"]


def calls_of(path: Path, name: str) -> list[int]:
    """The lines where a module calls ``name`` (as a name or an attribute)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Name) and func.id == name) or (
                isinstance(func, ast.Attribute) and func.attr == name
            ):
                found.append(node.lineno)
    return sorted(found)


def test_a_turn_is_played_only_through_service_turns() -> None:
    """deadlines, gm, mailflow (every use case) play orders with turns.play;
    games.submit is called by turns and by games' own dry run alone."""
    callers = {
        path.name: calls_of(path, "submit")
        for path in sorted((PACKAGE / "service").rglob("*.py"))
        if calls_of(path, "submit")
    }
    assert set(callers) == {"games.py", "turns.py"}
    assert len(callers["turns.py"]) == 1
    assert "play_bot_turns" in {
        n.name
        for n in ast.walk(ast.parse((PACKAGE / "service" / "play" / "turns.py").read_text()))
        if isinstance(n, ast.FunctionDef)
    }


# service/'s sub-packages (docs/ARCHITECTURE.md): what each may import besides
# the shared base (service/context.py, clock.py, errors.py). Decide, then tell:
# play decides and stores and never renders or sends; tell renders what was
# decided; intake takes one mail to play, then has it told; ops runs the cycle
# and looks on.
SERVICE_ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "play": {"base"},
    "tell": {"base", "play"},
    "intake": {"base", "play", "tell"},
    "ops": {"base", "play", "tell", "intake"},
}


def service_part(module: str) -> str:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 else "base"


def test_service_sub_packages_import_only_those_below() -> None:
    wrong = []
    for module, targets in sorted(graph().items()):
        if layer(module) != "service":
            continue
        own = service_part(module)
        for target in sorted(targets):
            if layer(target) != "service" or service_part(target) == own:
                continue
            if service_part(target) not in SERVICE_ALLOWED[own]:
                wrong.append(f"{module} imports {target}")
    assert wrong == []


def test_each_service_sub_package_says_what_it_owns() -> None:
    known = modules()
    packages = {service_part(m) for m in known if layer(m) == "service"} - {"base"}
    assert packages == set(SERVICE_ALLOWED) - {"base"}
    for name in packages:
        doc = ast.get_docstring(ast.parse(known[f"pbem.service.{name}"].read_text()))
        assert doc and len(doc.splitlines()) == 1, name


MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
LONG_ON_PURPOSE = "# long on purpose:"  # on the line above a def, with the reason


def long_functions(path: Path) -> list[str]:
    """Functions over MAX_FUNCTION_LINES without a comment saying why."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for node in ast.walk(ast.parse("\n".join(lines))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            if size > MAX_FUNCTION_LINES and LONG_ON_PURPOSE not in lines[first - 2]:
                found.append(f"{path.name}:{node.lineno} {node.name} ({size} lines)")
    return found


def test_no_module_is_over_600_lines() -> None:
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in modules().values()
    }
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}


def test_no_function_is_over_80_lines_without_a_reason() -> None:
    assert [f for path in sorted(modules().values()) for f in long_functions(path)] == []


def test_the_length_check_sees_a_long_function(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    module = tmp_path / "m.py"
    module.write_text(f"def f():\n{body}\n\n{LONG_ON_PURPOSE} a table\ndef g():\n{body}")
    assert long_functions(module) == ["m.py:1 f (81 lines)"]
