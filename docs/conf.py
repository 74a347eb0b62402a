"""Sphinx configuration of the ggspec site.

Build it with `python docs/build.py OUT` (it stages docs/ and spec/ with the generated pages
into OUT/_source and runs Sphinx on that with this file as configuration, warnings as errors).
Sphinx + MyST-Parser: MyST reads the existing markdown of docs/ and spec/ unchanged, and autodoc
renders the reference model's API from its docstrings.
"""

import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

project = "ggspec"
author = "the ggspec authors"
copyright = "2026, the ggspec authors"  # noqa: A001 - Sphinx's name
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.viewcode"]
root_doc = "docs/index"
source_suffix = {".md": "markdown"}
exclude_patterns = ["_extra/**", "docs/examples/**"]
# GitHub-style anchors for ## and ### headings, so links such as
# ../spec/tdata.md#tdata-4-tensor_set-writes-through-the-resolved-buffer keep working
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
# docstrings use `name` for code, as in markdown
default_role = "literal"
# the spec quotes code and assert messages: keep ' and " as written
smartquotes = False
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
html_theme = "alabaster"
html_title = "ggspec: the ggml-backend specification"
html_static_path = ["_static"]
html_css_files = ["ggspec.css"]
# page_width is where alabaster's narrow-screen layout starts; _static/ggspec.css makes the wider layout fluid
html_theme_options = {"page_width": "875px", "sidebar_width": "230px", "body_max_width": "none"}
# spec/ writes every clause head as ### (its machine-readable format, reference/clauses.py), also
# where a chapter has no ## section above it: that jump is by design
suppress_warnings = ["myst.header", "ref.python"]
# ("ref.python": a type hint such as `type` that names both a builtin and a field of a reference
# class, say Tensor.type, is ambiguous to Sphinx's Python domain; the rendered hint is right)


def _only_our_modules(app: Sphinx, doctree: object) -> None:
    """viewcode lists in _modules/index.html modules it found on inherited members (`builtins`,
    `_abc`) but writes no page for them: keep only ggspec's."""
    modules = getattr(app.env, "_viewcode_modules", {})
    for name in [m for m in modules if not m.startswith("ggspec.")]:
        del modules[name]


_CLAUSE_TITLE = re.compile(r"([A-Z]+-\d+): ")


class ClauseAnchors(SphinxTransform):
    """One anchor per clause, its ID as written: the section of `### TDATA-3: ...` gets the id
    `TDATA-3` first, so its permalink, the sidebar's entry and every `{ref}` to the clause's
    target `(TDATA-3)=` (whose docutils id would be `tdata-3`) all point at `#TDATA-3`, the
    anchor the docs promise. Runs before the standard domain records labels (priority 850)."""

    default_priority = 840

    def apply(self, **kwargs: object) -> None:
        doc = self.document
        for section in list(doc.findall(nodes.section)):
            title = section.next_node(nodes.title)
            m = _CLAUSE_TITLE.match(title.astext()) if title is not None else None
            if m is None or m.group(1).lower() not in section["ids"]:
                continue
            cid = m.group(1)
            section["ids"] = [cid, *(i for i in section["ids"] if i != cid.lower())]
            doc.ids.pop(cid.lower(), None)
            doc.ids[cid] = section
            for name, labelid in list(doc.nameids.items()):
                if labelid == cid.lower():
                    doc.nameids[name] = cid


def setup(app: Sphinx) -> None:
    app.add_transform(ClauseAnchors)
    app.connect("doctree-read", _only_our_modules, priority=600)
