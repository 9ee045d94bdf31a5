#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""doc_words.py - the words of every command, as the four places an
operator reads them say them: `xnf help`, `xnf OBJECT help` (and `xnf
OBJECT VERB help` where a verb has its own), the bash completion and the
SYNOPSIS parts of xnf(8).

  doc_words.py check XNF MAN COMPLETION   every object's words the same
                                          in all four; prints each
                                          difference
  doc_words.py words XNF MAN COMPLETION   each object's words, per place
  doc_words.py reasons MAN HEADER MD...   every reason xnf(8) and the
                                          Markdown pages name is one of
                                          XNF_REASONS in HEADER

A word is a keyword an operator types: a token of the syntax in lower
case (`add`, `via`, `kernel`, `flow_cache`, `-f`), not a metavariable
(`DEV`, `PREFIX`) and not prose. Where each place keeps its syntax:

- `xnf help`: the line "  xnf OBJECT ...", and the lines after it that
  are indented deeper; the lines "NAME := ..." (OBJECT, OPTIONS, NF);
- `xnf OBJECT help`: its "Usage:" lines, the lines indented deeper below
  them, and its "NAME := ..." lines up to two blanks in a row (what
  follows is prose);
- the completion: the words given to _xnf_reply, _xnf_keywords, _xnf_rate,
  _xnf_list and _xnf_full in the object's branch of `case $obj`; the
  `objects` and option lists for the whole command;
- xnf(8): the SYNOPSIS, and in OBJECTS AND COMMANDS each section
  ".SS xnf OBJECT ..." from its title to the first paragraph.

`help` itself is every object's and is not compared. Exit status 0 when
the places agree, 1 with one line per difference.
"""
import re
import subprocess
import sys

WORD = re.compile(r"^-?[a-z][a-z0-9_-]*$")
SPLIT = re.compile(r"[\s\[\]{}|,()]+")
SHORT = re.compile(r"(?<!\S)-[a-zA-Z](?!\S)")  # a short option
IGNORED = {"help", "xnf", "usage"}
# Objects run by a Python tool whose help is argparse's (xnf model): only
# their commands are compared.
ARGPARSE = {"model"}


def words_of(text):
    """The keywords of one piece of syntax."""
    out = set()
    for tok in SPLIT.split(text):
        tok = tok.strip(".:;'\"`")
        if WORD.match(tok) and tok not in IGNORED:
            out.add(tok)
    return out


def run(xnf, *args):
    """stdout of `xnf ARGS`, or None when it did not exit 0."""
    p = subprocess.run([xnf, *args], capture_output=True, text=True,
                       timeout=60)
    return p.stdout if p.returncode == 0 else None


def indent(line):
    return len(line) - len(line.lstrip(" "))


def grammar(lines, i):
    """The syntax of a line "NAME := SYNTAX  prose" at @lines[@i] (an open
    brace continues it on the next lines), or None."""
    m = re.match(r"^([A-Z][A-Z0-9_]*) *:= (.*)$", lines[i])
    if not m:
        return None
    text = re.split(r"\s{2,}", m.group(2).strip())[0]
    while text.count("{") > text.count("}") and i + 1 < len(lines):
        i += 1
        text += " " + lines[i].strip()
    return m.group(1), text



def help_words(text, obj):
    """The words of `xnf OBJ help` (or of a verb's help)."""
    out, usage = set(), False
    lines = text.splitlines()
    for n, line in enumerate(lines):
        m = re.match(r"^(Usage|usage|\s+):? *xnf %s(\s.*)?$" % re.escape(obj),
                     line)
        if m and (line[:1] in "Uu" or usage):
            usage = True
            out |= words_of(m.group(2) or "")
            continue
        if usage and indent(line) >= 10 and not line.strip().startswith("xnf"):
            out |= words_of(line)
            continue
        usage = False
        g = grammar(lines, n)
        if g:
            out |= words_of(g[1])
    # argparse's "{a,b,c}" lists its commands; its options are -h, -j.
    return out - {"-h", "-j"} - set(obj.split())


def overview(text):
    """From `xnf help`: {object: words}, and its OBJECT, OPTIONS and NF
    lists."""
    objs, lists, cur = {}, {}, None
    lines = text.splitlines()
    for n, line in enumerate(lines):
        m = re.match(r"^  xnf ([a-z]+)(\s.*)?$", line)
        if m:
            cur = m.group(1)
            objs.setdefault(cur, set())
            rest = m.group(2) or ""
            # "xnf fdb { add ... } | xnf fdb { del ... }": one object.
            objs[cur] |= words_of(rest.replace("xnf " + cur, ""))
            continue
        if cur and indent(line) >= 6 and not line.strip().startswith("xnf"):
            objs[cur] |= words_of(line)
            continue
        cur = None
        g = grammar(lines, n)
        if g:
            lists[g[0]] = (set(SHORT.findall(g[1])) if g[0] == "OPTIONS"
                           else words_of(g[1]))
    return objs, lists


def roff_text(lines):
    """roff source lines as the words they print."""
    out = []
    for line in lines:
        if line.startswith(".\\\"") or not line.strip():
            continue
        if line.startswith("."):
            macro, _, rest = line.partition(" ")
            if macro not in (".B", ".BR", ".RB", ".I", ".IR", ".RI", ".BI",
                             ".IB"):
                continue
            line = rest
        line = line.replace("\\-", "-").replace("\\&", "")
        line = re.sub(r"\\f[BIRP]", "", line).replace('"', " ")
        out.append(line)
    return " ".join(out)


def man(path):
    """From xnf(8): {object: words of its sections' synopses}, and the
    SYNOPSIS's OBJECT, OPTIONS and NF lists."""
    with open(path, encoding="utf-8") as f:
        src = f.read().splitlines()
    objs, lists, i = {}, {}, 0
    while i < len(src):
        line = src[i]
        if line.startswith(".SH SYNOPSIS"):
            j = i + 1
            while j < len(src) and not src[j].startswith(".SH"):
                j += 1
            # "OBJECT := { ... }" over several lines: each a .ti -8 group.
            groups, g = [], []
            for s in src[i + 1:j]:
                if s.startswith(".ti"):
                    groups.append(g)
                    g = []
                else:
                    g.append(s)
            groups.append(g)
            for g in groups:
                text = roff_text(g)
                m = re.match(r"^\s*([A-Z]+)\s*:=\s*(.*)$", text)
                if m:
                    lists[m.group(1)] = (set(SHORT.findall(m.group(2)))
                                         if m.group(1) == "OPTIONS" else
                                         words_of(m.group(2)))
            i = j
            continue
        m = re.match(r"^\.SS xnf ([a-z]+)", line)
        if m:
            obj = m.group(1)
            j = i + 1
            while j < len(src) and not re.match(r"^\.(PP|TP|SS|SH)", src[j]):
                j += 1
            objs.setdefault(obj, set())
            text = roff_text(src[i + 1:j])
            if obj in ARGPARSE:
                # Its options are argparse's, its help lists only its
                # commands: the words right after "xnf OBJ".
                words = set(re.findall(r"\bxnf %s ([a-z]+)" % obj, text))
                words -= IGNORED
            else:
                words = words_of(text)
            objs[obj] |= words - {obj}
            i = j
            continue
        i += 1
    return objs, lists


def completion(path):
    """From the bash completion: {object: words}, its object list and its
    options."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # Continued lines as one.
    text = text.replace("\\\n", " ")
    lines = text.splitlines()
    lists = {}
    m = re.search(r"local objects=\(([^)]*)\)", text)
    if m:
        lists["OBJECT"] = words_of(m.group(1))
    opts = set()
    for line in lines:
        if "_xnf_reply -j" in line:
            opts |= set(SHORT.findall(line))
    lists["OPTIONS"] = opts
    objs, cur = {}, None
    start = next((n for n, line in enumerate(lines)
                  if re.match(r"^\tcase \$obj in$", line)), None)
    if start is None:
        return objs, lists
    for line in lines[start + 1:]:
        if re.match(r"^\tesac$", line):
            break
        m = re.match(r"^\t([a-z][a-z |-]*)\)$", line)
        if m:
            cur = [o.strip() for o in m.group(1).split("|")]
            for o in cur:
                objs.setdefault(o, set())
            continue
        if not cur:
            continue
        for call in re.finditer(
                r"_xnf_(?:reply|keywords|list|full|rate)\s+([^;&|]*)", line):
            args = call.group(1)
            # _xnf_full "WORD" CANDIDATE...: the candidates.
            args = re.sub(r'"[^"]*"', " ", args)
            args = re.sub(r"\$\([^)]*\)|\$\{[^}]*\}|\$\w+", " ", args)
            for o in cur:
                objs[o] |= words_of(args)
    return objs, lists


def gather(xnf, man_path, comp_path):
    text = run(xnf, "help")
    if text is None:
        sys.exit("xnf help failed")
    over, over_lists = overview(text)
    objects = sorted(over_lists.get("OBJECT", set()))
    helps = {}
    for obj in objects:
        h = run(xnf, obj, "help")
        words = help_words(h, obj) if h is not None else set()
        # A verb with a help of its own: its words are the object's.
        for verb in sorted(words):
            if verb.startswith("-"):
                continue
            v = run(xnf, obj, verb, "help")
            if v and re.search(r"^(Usage|usage):? *xnf %s %s\b" % (obj, verb),
                               v, re.M):
                words |= help_words(v, "%s %s" % (obj, verb)) - {verb}
                words.add(verb)
        helps[obj] = words
    m_objs, m_lists = man(man_path)
    c_objs, c_lists = completion(comp_path)
    return objects, helps, over, over_lists, m_objs, m_lists, c_objs, c_lists


def check(xnf, man_path, comp_path, show=False):
    (objects, helps, over, over_lists, m_objs, m_lists, c_objs,
     c_lists) = gather(xnf, man_path, comp_path)
    faults = []

    def differ(what, ref, other, ref_name, other_name):
        missing, extra = ref - other, other - ref
        if missing:
            faults.append("%s: %s lacks %s" % (what, other_name,
                                               " ".join(sorted(missing))))
        if extra:
            faults.append("%s: %s has %s, which %s has not" %
                          (what, other_name, " ".join(sorted(extra)),
                           ref_name))

    for name in ("OBJECT", "OPTIONS", "NF"):
        ref = over_lists.get(name, set())
        if name != "NF":
            differ(name, ref, c_lists.get(name, set()) - {"help"},
                   "xnf help", "the completion")
        differ(name, ref, m_lists.get(name, set()), "xnf help", "xnf(8)")
    nfs = over_lists.get("NF", set())
    for obj in objects:
        ref = helps[obj] - nfs
        if show:
            print("%-9s help:       %s" % (obj, " ".join(sorted(ref))))
            print("%-9s xnf help:   %s" % (obj, " ".join(sorted(over.get(obj, set())))))
            print("%-9s xnf(8):     %s" % (obj, " ".join(sorted(m_objs.get(obj, set())))))
            print("%-9s completion: %s" % (obj, " ".join(sorted(c_objs.get(obj, set())))))
        what = "xnf %s" % obj
        # An NF's name may be a keyword too (`xnf ct show nat snat`): not
        # compared on either side.
        differ(what, ref, over.get(obj, set()) - nfs, "xnf %s help" % obj,
               "xnf help")
        differ(what, ref, m_objs.get(obj, set()) - nfs, "xnf %s help" % obj,
               "xnf(8)")
        differ(what, ref, c_objs.get(obj, set()) - nfs, "xnf %s help" % obj,
               "the completion")
    for f in faults:
        print(f)
    return 1 if faults and not show else 0


def reasons(man_path, header, mds):
    """Every reason the documentation names is a reason xnf counts."""
    with open(header, encoding="utf-8") as f:
        known = set(re.findall(r"^\s*X\([A-Z_0-9]+, *([a-z_0-9]+)\)",
                               f.read(), re.M))
    faults = []
    with open(man_path, encoding="utf-8") as f:
        src = f.read().splitlines()
    for n, line in enumerate(src):
        # "... (reason" then ".BR name )" on the next line.
        if re.search(r"\breason$", line) and n + 1 < len(src):
            m = re.match(r"^\.BR? (\S+)", src[n + 1])
            if m and m.group(1) not in known:
                faults.append("%s:%d: reason %s is not one xnf counts" %
                              (man_path, n + 2, m.group(1)))
    for md in mds:
        with open(md, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                for r in re.findall(r"\breason `([a-z_0-9]+)`|"
                                    r"\(`([a-z_0-9]+)`; (?:pass|drop)", line):
                    r = r[0] or r[1]
                    if r not in known:
                        faults.append("%s:%d: reason %s is not one xnf counts"
                                      % (md, n, r))
    for f in faults:
        print(f)
    return 1 if faults else 0


def main(argv):
    if len(argv) >= 2 and argv[1] in ("check", "words") and len(argv) == 5:
        return check(argv[2], argv[3], argv[4], show=argv[1] == "words")
    if len(argv) >= 4 and argv[1] == "reasons":
        return reasons(argv[2], argv[3], argv[4:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
