"""The public API is documented and typed: every public name, method and property has a docstring
and is declared in the type stubs (stepsim/__init__.pyi), and the stubs declare nothing else."""

import ast
import inspect
from pathlib import Path

import stepsim

STUB = Path(stepsim.__file__).with_name("__init__.pyi")


def stub_names():
    tree = ast.parse(STUB.read_text())
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            members = set()
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        members.add(item.name)
                    elif isinstance(item, ast.AnnAssign):
                        members.add(item.target.id)
            names[node.name] = members
    return names


def public_members(cls):
    members = set()
    for name, value in vars(cls).items():
        if name.startswith("_") and name != "__init__":
            continue
        if name == "__init__" or name in ("count", "index"):
            continue
        members.add(name)
    if hasattr(cls, "_fields"):  # a NamedTuple's fields
        members |= set(cls._fields)
    return members


def test_the_stubs_declare_exactly_the_public_api():
    stubs = stub_names()
    assert set(stubs) | {"__version__"} == set(stepsim.__all__) | {"__version__"}
    for name in stepsim.__all__:
        obj = getattr(stepsim, name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            ours = public_members(obj) | {m for b in obj.__mro__[1:-1] if b.__module__.startswith("stepsim")
                                         for m in public_members(b)}
            assert stubs[name] == ours, name


def test_every_public_call_has_a_docstring():
    assert stepsim.__doc__
    for name in stepsim.__all__:
        obj = getattr(stepsim, name)
        assert inspect.getdoc(obj), name
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member in public_members(obj):
                attr = getattr(obj, member)
                if callable(attr) and not isinstance(attr, property):
                    assert inspect.getdoc(attr), f"{name}.{member}"


def test_the_version_is_the_command_lines():
    import subprocess
    from conftest import stepsim_binary
    out = subprocess.run([stepsim_binary(), "--version"], stdout=subprocess.PIPE, text=True, check=True).stdout
    assert out.strip() == f"stepsim {stepsim.__version__}"
