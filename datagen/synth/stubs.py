"""A function's body replaced by its language's stub, its signature and doc comments kept.

What the ``feature`` family removes: the interface a group of tests calls stays (names,
parameters, types, doc comments and Python docstrings), every statement of the body goes,
and in its place stands the statement each language uses for "not written yet" (its
spec's ``Stub``, ``synth/languages/``, the one stub table the ``removal`` family uses
too). The result still compiles: a stub never returns, so no return value is missing;
Go's imports that only the removed bodies used are dropped as well (``go vet`` would
refuse them).
"""

from __future__ import annotations

from collections.abc import Iterable

from datagen.synth.entities import Entity, parse
from datagen.synth.go_unused import unused
from datagen.synth.languages import LANGS, spec
from datagen.synth.source import Edit, Node, Source, descendants

# bodies a stub cannot stand in for (they would not compile): Java's ``this(...)`` /
# ``super(...)`` first statement, Rust's ``-> impl Trait`` (``!`` implements no trait), and a
# function the compiler may evaluate (C++ ``constexpr`` / ``consteval``, Rust ``const fn``): a
# trap or ``todo!()`` in it fails every constant expression that calls it, so the build breaks
# (a header-only ``constexpr`` library's features were all ``breaks_collection``; the words
# that say so are the spec's ``compile_time``)
_NO_STUB_FIRST = frozenset({"explicit_constructor_invocation"})
_BRACE_BODIES = frozenset({"block", "statement_block", "compound_statement", "constructor_body",
                           "function_body"})


def body_node(src: Source, entity: Entity) -> Node | None:
    """The body node of a function or method entity (None: no body a stub can replace)."""
    node = src.entity_node(entity)
    if node is None:
        return None
    fn = _function_of(node)
    if fn is None:
        return None
    body = fn.child_by_field_name("body")
    if body is None and fn.type == "method":  # tree-sitter-ruby: the statements follow the parameters
        body = next((c for c in fn.named_children if c.type == "body_statement"), None)
    if body is None:
        return None
    ret = fn.child_by_field_name("return_type")
    if ret is not None and src.text_of(ret).lstrip().startswith("impl "):
        return None
    if compile_time(src, node, body):
        return None
    named = [c for c in body.named_children if c.type not in ("comment", "line_comment", "block_comment")]
    if named and named[0].type in _NO_STUB_FIRST:
        return None
    return body


def compile_time(src: Source, node: Node, body: Node) -> bool:
    """Whether the function's head (up to its body) makes it one the compiler may evaluate."""
    rule = src.spec.compile_time
    return rule is not None and rule.search(src.data[node.start_byte:body.start_byte].decode("utf-8", "replace")) \
        is not None


def _function_of(node: Node) -> Node | None:
    """The function node under an entity's span node (decorators, ``const f = () =>``,
    ``export default function``, CommonJS assignments)."""
    if node.type == "decorated_definition":
        return node.child_by_field_name("definition")
    if node.type in ("lexical_declaration", "variable_declaration"):
        return node.named_children[0].child_by_field_name("value")
    if node.type in ("expression_statement", "export_statement"):
        for child in descendants(node):
            if child.type in ("arrow_function", "function_expression", "function", "generator_function"):
                return child
        return None
    return node


def stub_edit(src: Source, entity: Entity) -> Edit | None:
    """The edit that replaces ``entity``'s body with the stub, or None (no body, an
    already stubbed one, a one-line Python def)."""
    if entity.lang not in LANGS or entity.kind not in ("function", "method"):
        return None
    body = body_node(src, entity)
    if body is None:
        return None
    how = spec(entity.lang).stub
    stub, step = how.statement, spec(entity.lang).indent
    head = src.line_indent(src.entity_node(entity).start_byte)
    if how.body == "docstring":
        return _python_edit(src, body, stub)
    if how.body == "statements":
        return _ruby_edit(src, body, stub, head + step)
    if body.type not in _BRACE_BODIES and not how.expression_bodies:
        return None
    if body.type not in _BRACE_BODIES:  # an arrow function's expression body
        return body.start_byte, body.end_byte, "{ " + stub + " }"
    if stub in src.text_of(body):
        return None
    lines = [stub]
    fn = _function_of(src.entity_node(entity))
    if how.void_uses:
        lines = [f"(void){name};" for name in _c_uses(src, fn, body)] + lines
    close = src.line_indent(body.end_byte) if _owns_line_end(src, body) else head
    inner = "".join(head + step + line + "\n" for line in lines)
    return body.start_byte, body.end_byte, "{\n" + inner + close + "}"


def _c_uses(src: Source, fn: Node, body: Node) -> list[str]:
    """The parameter names of a C / C++ function, then the file's static functions its body
    calls: what the stub keeps using."""
    names: list[str] = []
    decl = fn.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    params = decl.child_by_field_name("parameters") if decl is not None else None
    for p in params.named_children if params is not None else []:
        ident = p.child_by_field_name("declarator")
        while ident is not None and ident.type not in ("identifier",):
            ident = ident.child_by_field_name("declarator")
        if ident is not None:
            names.append(src.text_of(ident))
    statics = _static_functions(src)
    called = {src.text_of(c.child_by_field_name("function")) for c in descendants(body, frozenset({"call_expression"}))
              if c.child_by_field_name("function") is not None}
    return names + sorted(called & statics)


def _static_functions(src: Source) -> set[str]:
    out = set()
    for fn in src.tree.root_node.named_children:
        if fn.type == "function_definition" and any(c.type == "storage_class_specifier" and src.text_of(c) == "static"
                                                    for c in fn.children):
            decl = fn.child_by_field_name("declarator")
            while decl is not None and decl.type not in ("identifier",):
                decl = decl.child_by_field_name("declarator")
            if decl is not None:
                out.add(src.text_of(decl))
    return out


def _owns_line_end(src: Source, body: Node) -> bool:
    """The body's closing brace starts its own line."""
    return not src.data[src.line_start(body.end_byte - 1):body.end_byte - 1].strip()


def _python_edit(src: Source, body: Node, stub: str) -> Edit | None:
    statements = [c for c in body.named_children if c.type != "comment"]
    if not statements or statements[0].start_point[0] == body.parent.start_point[0]:
        return None  # ``def f(): return 1``: no block to keep a docstring in
    first = statements[0]
    if first.type == "expression_statement" and first.named_children and first.named_children[0].type == "string":
        statements = statements[1:]
    if not statements or src.text_of(statements[0]).startswith(stub):
        return None
    indent = src.line_indent(statements[0].start_byte)
    start = src.line_start(statements[0].start_byte)
    return start, body.end_byte, indent + stub


def _ruby_edit(src: Source, body: Node, stub: str, indent: str) -> Edit | None:
    if body.start_point[0] == body.parent.start_point[0] or src.text_of(body).strip().startswith(stub):
        return None  # an endless or one-line method
    return src.line_start(body.start_byte), body.end_byte, indent + stub


def stub_file(path: str, text: str, entities: Iterable[Entity]) -> tuple[str, list[Entity]] | None:
    """``text`` with every stubbable entity of ``entities`` (all of ``path``) stubbed, and the
    entities it stubbed; None when none could be or the result does not parse. An entity
    inside another one of the set goes with the outer stub."""
    chosen = sorted(entities, key=lambda e: (e.start_byte, -e.end_byte))
    if not chosen:
        return None
    src = Source.parse(path, text, chosen[0].lang)
    edits: list[Edit] = []
    done: list[Entity] = []
    for e in chosen:
        if edits and e.start_byte < edits[-1][1]:
            continue  # nested in a stubbed body
        edit = stub_edit(src, e)
        if edit is not None and (not edits or edit[0] >= edits[-1][1]):
            edits.append(edit)
            done.append(e)
    if not edits:
        return None
    new = src.apply(edits)
    if src.spec.stub.drops_unused_imports:
        new = _drop_unused_go_imports(text, new)
    accepted = src.accept(new)
    return (accepted, done) if accepted is not None else None


def _drop_unused_go_imports(old: str, new: str) -> str:
    """``new`` without the import specs only the removed bodies used."""
    before = unused(parse(old, "go").root_node)
    tree = parse(new, "go")
    gone = {k.split(":", 1)[1] for k, n in (unused(tree.root_node) - before).items() if k.startswith("import:")}
    if not gone:
        return new
    src = Source.parse("x.go", new, "go")
    edits = []
    for decl in descendants(tree.root_node, frozenset({"import_declaration"})):
        specs = list(descendants(decl, frozenset({"import_spec"})))
        dropped = [spec for spec in specs if _go_import_name(src, spec) in gone]
        if dropped and len(dropped) == len(specs):
            edits.append(src.line_span(decl))
        else:
            edits += [src.line_span(spec) for spec in dropped]
    return src.apply((a, b, "") for a, b in edits)


def _go_import_name(src: Source, spec: Node) -> str:
    name = spec.child_by_field_name("name")
    if name is not None:
        return src.text_of(name)
    return src.text_of(spec.child_by_field_name("path")).strip('"`').rsplit("/", 1)[-1]


def signature(text: str, entity: Entity) -> str:
    """The entity's signature as one line: its definition up to the body, whitespace collapsed."""
    src = Source.parse(entity.path, text, entity.lang)
    body = body_node(src, entity)
    node = src.entity_node(entity)
    if node is None:
        return entity.qualname
    end = body.start_byte if body is not None else node.end_byte
    head = src.data[node.start_byte:end].decode("utf-8")
    lines = [line.strip() for line in head.splitlines()]
    lines = [line for line in lines if line and not line.startswith(("@", "#", "//", "/*", "* ", "*/"))]
    out = " ".join(" ".join(lines).split()).rstrip("{:= ").rstrip()
    return out or entity.qualname
