#!/usr/bin/env python3
"""Accept/reject golden for tessera's regexes, from Python's `re`.

For each pattern below and a pool of strings (shared ones, the pattern's
own, and seeded random ones over a small alphabet), records whether the
whole string matches (re.fullmatch: compile_regex, guided_regex) and whether
the pattern occurs in it (re.search: JSON Schema `pattern`), plus the
string's JSON text. re.ASCII makes \\d \\w \\s ASCII as in ECMAScript; strings
avoid where Python and ECMAScript still differ (\\r and U+2028/9 under `.`,
Unicode spaces under \\s, a newline before `$`, DEL, which tessera's JSON
escapes), and patterns they read differently (`x{,3}` is a literal in
ECMAScript, a bound in Python).

    .venv/bin/python tools/gen_regex_golden.py --out tests/golden/grammar/regex_cases.json
"""
import argparse
import json
import random
import re

PATTERNS = {
    r"abc": ["abc", "ab", "abcd", "xabc"],
    r"a|b|cd": ["a", "b", "cd", "c", "ab", ""],
    r"^\d{3}-\d{4}$": ["555-1234", "55-1234", "5555-1234", "abc-defg"],
    r"[A-Z][a-z]*": ["Hello", "hello", "H", "HeLLo", "Élan"],
    r"(ab)+c?": ["ab", "abab", "ababc", "abc", "c", "aba"],
    r"x{2,4}y{0,}z{1}": ["xxz", "xxxxyyz", "xz", "xxxxxz", "xxyyyyyz"],
    r"[^\s]+": ["word", "two words", "tab\there", "é中"],
    r"\w+@\w+\.com": ["me@host.com", "me@host.org", "@host.com", "a_b@c9.com"],
    r"[\d.,-]+": ["1,234.5", "-3", "1e5", ".."],
    r"(?:red|green|blue)-\d": ["red-1", "green-22", "blue-0", "yellow-1"],
    r"[a-c-]+": ["a-b", "abc", "d", "--"],
    r"\x41\u00e9\t": ["Aé\t", "Ae\t", "A\u00e9 "],
    r"[\\\]\[]+": ["\\", "[]", "a"],
    r'"quoted"\s"x"': ['"quoted" "x"', '"quoted""x"', 'quoted x'],
    r".+": ["anything", "", "é", "line\nbreak"],
    r"a.c": ["abc", "a\nc", "a中c", "ac"],
    r"\D\W\S": ["a b", "1 b", "a!!", "ab "],
    r"colou?r": ["color", "colour", "colouur"],
    r"(a|ab)(c|bcd)(d*)": ["abcd", "acd", "abcdd", "abd"],
    r"[^a-z]{2}": ["AB", "aB", "12", "é!"],
    r"\.\*\+\?\(\)\{\}\|\^\$": [".*+?(){}|^$", "x"],
    r"a{3}": ["aaa", "aa", "aaaa"],
    r"a{2,}?b+?": ["aab", "aaabbb", "ab"],
    r"(?<year>\d{4})-(?<m>\d\d)": ["2024-05", "24-05"],
    r"^$": ["", "a"],
    r"^(\+|-)?\d+(\.\d+)?$": ["+1.5", "-2", "3.", ".5", "42"],
    r"[\u4e00-\u9fff]+": ["中文", "中a", "日本語"],
    r"a|": ["a", "", "b"],
    r"\n\f\v\0": ["\n\f\v\0", "\n"],
}
SHARED = ["", "a", "abc", "123", "A1_", " ", "a b", "é", "\"", "\\", "x{,3}", "aaa", "--", "\t"]
ALPHABET = "abcxyzAZ019 -._@\"\\\té中"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--random", type=int, default=12)
    args = ap.parse_args()
    cases = []
    for i, (pattern, own) in enumerate(PATTERNS.items()):
        rng = random.Random(i)
        pool = list(dict.fromkeys(own + SHARED + ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 8)))
                                                     for _ in range(args.random)]))
        # Python spells a named group (?P<name>...).
        rx = re.compile(re.sub(r"\(\?<(?=[A-Za-z])", "(?P<", pattern), re.ASCII)
        strings = []
        for s in pool:
            if "\r" in s or "\x7f" in s:
                continue
            search = None if s.endswith("\n") else rx.search(s) is not None
            strings.append({"s": s, "json": json.dumps(s, ensure_ascii=False), "full": rx.fullmatch(s) is not None,
                            "search": search})
        cases.append({"pattern": pattern, "strings": strings})
    with open(args.out, "w") as f:
        f.write('{"oracle": "python re (re.ASCII)", "cases": [\n')
        f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
        f.write("\n]}\n")
    print(f"{len(cases)} patterns, {sum(len(c['strings']) for c in cases)} strings")


if __name__ == "__main__":
    main()
