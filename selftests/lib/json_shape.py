#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""json_shape.py - xnf's JSON documents against the schemas of docs/json/
(docs/json.md), with Debian's python3-jsonschema (draft 2020-12).

  json_shape.py check DOCS DIR      the outputs $DIR/manifest lists (kept
                                    by json.bats): exit status, documents
                                    on stdout and stderr, each valid
                                    against its schema; prints each
                                    failure, and the schemas met to
                                    $DIR/seen
  json_shape.py validate DOCS FILE  each document of FILE (one or more)
  json_shape.py names DOCS          the schema name of each schema file
  json_shape.py doc DOCS MD         each schema and every member it names
                                    are in MD, the schema's under its own
                                    heading

A document is one JSON object whose first member is "schema":
"xnf/NAME/MAJOR"; docs/json/NAME.schema.json describes it. Exit status 0
when all is well, 1 with one line per fault.
"""
import json
import os
import re
import sys
import warnings

from jsonschema import Draft202012Validator, RefResolver

NAME = re.compile(r"^xnf/([a-z0-9-]+)/([0-9]+)$")


class Schemas:
    """Every schema file of DOCS, their $refs to each other resolved by
    file name, as a reader of the files on disk resolves them."""

    def __init__(self, docs):
        self.docs = os.path.abspath(docs)
        self.files = {}
        for f in sorted(os.listdir(self.docs)):
            if f.endswith(".schema.json"):
                with open(os.path.join(self.docs, f)) as fh:
                    self.files[f] = json.load(fh)
        self.store = {self.uri(f): s for f, s in self.files.items()}

    def uri(self, f):
        return "file://" + os.path.join(self.docs, f)

    def name(self, f):
        """The "schema" member a document of file F carries."""
        return self.files[f]["properties"]["schema"]["const"]

    def validator(self, name):
        m = NAME.match(name) if isinstance(name, str) else None
        f = m.group(1) + ".schema.json" if m else None
        if f not in self.files or self.name(f) != name:
            return None
        s = self.files[f]
        Draft202012Validator.check_schema(s)
        # RefResolver is what 4.10 (Debian 12) has; later versions
        # deprecate it in favour of the referencing package.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            res = RefResolver(self.uri(f), s, store=self.store)
        return Draft202012Validator(s, resolver=res)

    def faults(self, o, want=None):
        """What is wrong with document O (of schema WANT unless None)."""
        if not isinstance(o, dict) or not o:
            return ["not an object"]
        first = next(iter(o))
        if first != "schema":
            return ["the first member is %r, not \"schema\"" % first]
        if want is not None and o["schema"] != want:
            return ["schema %r, expected %r" % (o["schema"], want)]
        v = self.validator(o["schema"])
        if v is None:
            return ["schema %r: no such file in %s" % (o["schema"], self.docs)]
        # A message may quote the whole instance: its start says enough.
        return ["%s: %.300s" % ("/".join(map(str, e.absolute_path)) or
                                "(top)", e.message)
                for e in sorted(v.iter_errors(o), key=lambda e: e.path)]


def documents(text):
    """The JSON documents of TEXT, in order (an object keeps its members'
    order); a ValueError names what is not JSON."""
    dec = json.JSONDecoder()
    out, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        o, i = dec.raw_decode(text, i)
        out.append(o)


def check_stream(sch, text, what, schema, how, seen):
    """TEXT (stdout or stderr) as HOW says: "none", "one" document,
    "lines" (one or more, one a line) or "warnings" (one or more warning
    documents, one a line), each of SCHEMA ("any": its own)."""
    if how == "none":
        return ["%s: not empty: %r" % (what, text[:200])] if text else []
    if how == "warnings":
        schema = "xnf/warning/1"
    try:
        docs = documents(text)
    except ValueError as e:
        return ["%s: not JSON: %s: %r" % (what, e, text[:200])]
    bad = []
    if not docs:
        bad.append("%s: no document" % what)
    if how == "one" and len(docs) > 1:
        bad.append("%s: %d documents, not one" % (what, len(docs)))
    if how in ("lines", "warnings") and \
            len([ln for ln in text.splitlines() if ln.strip()]) != len(docs):
        bad.append("%s: not one document a line" % what)
    for k, o in enumerate(docs):
        for f in sch.faults(o, None if schema == "any" else schema):
            bad.append("%s, document %d: %s" % (what, k + 1, f))
        if isinstance(o, dict):
            seen.add(o.get("schema"))
    return bad


def check(docs, d):
    sch = Schemas(docs)
    seen, bad = set(), []
    with open(os.path.join(d, "manifest")) as f:
        cases = [ln.split() for ln in f if ln.strip()]
    for name, rc, schema, out, err in cases:
        with open(os.path.join(d, name + ".rc")) as f:
            got = f.read().strip()
        if got != rc:
            bad.append("%s: exit %s, expected %s" % (name, got, rc))
        for stream, how in (("out", out), ("err", err)):
            with open(os.path.join(d, "%s.%s" % (name, stream)),
                      errors="replace") as f:
                text = f.read()
            bad += check_stream(sch, text, "%s: std%s" % (name, stream),
                                schema, how, seen)
    with open(os.path.join(d, "seen"), "w") as f:
        f.writelines(s + "\n" for s in sorted(s for s in seen if s))
    print("%d outputs, %d schemas met" % (len(cases), len(seen)))
    return bad


def validate(docs, path):
    sch = Schemas(docs)
    with open(path) as f:
        try:
            objs = documents(f.read())
        except ValueError as e:
            return ["%s: not JSON: %s" % (path, e)]
    if not objs:
        return ["%s: no document" % path]
    return ["document %d: %s" % (k + 1, f) for k, o in enumerate(objs)
            for f in sch.faults(o)]


def members(s, out):
    """Every member name schema S defines, at any depth."""
    if isinstance(s, dict):
        for k, v in s.items():
            if k == "properties" and isinstance(v, dict):
                out.update(v)
            members(v, out)
    elif isinstance(s, list):
        for v in s:
            members(v, out)
    return out


def doc(docs, md):
    """Each schema has a section of MD, a heading naming it, in which each
    of its members is written as `name`."""
    sch = Schemas(docs)
    with open(md) as f:
        text = f.read()
    parts = re.split(r"^(#+ .*)$", text, flags=re.M)
    sections = {}
    for head, body in zip(parts[1::2], parts[2::2]):
        for name in re.findall(r"xnf/[a-z0-9-]+/[0-9]+", head):
            sections[name] = sections.get(name, "") + head + body
    bad = []
    for f in sch.files:
        name = sch.name(f)
        body = sections.get(name)
        if body is None:
            bad.append("%s: no heading of %s names %s" % (f, md, name))
            continue
        for m in sorted(members(sch.files[f], set()) - {"schema"}):
            if "`%s`" % m not in body:
                bad.append("%s: member %s not in the section of %s" %
                           (f, m, name))
    return bad


def main(argv):
    if len(argv) == 4 and argv[1] == "check":
        bad = check(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "validate":
        bad = validate(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "names":
        sch = Schemas(argv[2])
        for f in sch.files:
            print(sch.name(f))
        return 0
    elif len(argv) == 4 and argv[1] == "doc":
        bad = doc(argv[2], argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
