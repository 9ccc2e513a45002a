"""strip-yaml-comments' hand-written nasty cases with their exact expected bytes, and the
inputs it refuses or reports as errors, shared by test_yamlstrip_cases.py (each case
stripped and verified, each refusal and error checked) and test_yamlstrip_engines.py
(libyaml and the pure parser agree on each)."""

from __future__ import annotations

from labctl.yamlstrip.model import BINARY, INVALID_YAML, NOT_UTF8

# (id, input, expected output, number of comments)
STRIPPED: list[tuple[str, bytes, bytes, int]] = [
    # --- content `#` is never touched -------------------------------------------------
    (
        "hash-in-double-and-single-quotes",
        b'a: "x # not"  # yes\nb: \'y # no\'\nc: "multi\n  # line"\n',
        b'a: "x # not"\nb: \'y # no\'\nc: "multi\n  # line"\n',
        1,
    ),
    ("plain-a#b", b"k: a#b\nl: [c#d, e]\n", b"k: a#b\nl: [c#d, e]\n", 0),
    ("url-fragment", b"url: http://x/#frag  # c\n", b"url: http://x/#frag\n", 1),
    (
        "literal-block-hash-lines-are-content",
        b"a: |\n  # content\n  x # content\n    # deeper content\nb: 1 # c\n",
        b"a: |\n  # content\n  x # content\n    # deeper content\nb: 1\n",
        1,
    ),
    (
        "folded-block-hash-lines-are-content",
        b"a: >\n  one # two\n  # three\n\nb: 1\n",
        b"a: >\n  one # two\n  # three\n\nb: 1\n",
        0,
    ),
    (
        "keep-block-with-content-hash-and-comment-elsewhere",
        b"a: |+\n  x\n  # kept\n\nb: 1  # c\n",
        b"a: |+\n  x\n  # kept\n\nb: 1\n",
        1,
    ),
    # --- 1. block-scalar header comments ------------------------------------------------
    ("header-literal", b"key: | # note\n  body\n", b"key: |\n  body\n", 1),
    ("header-literal-two-spaces", b"key: |  # note\n  body # b\n", b"key: |\n  body # b\n", 1),
    (
        "header-folded-strip-indent",
        b"a: >-2 # header\n    text # t\nb: 2\n",
        b"a: >-2\n    text # t\nb: 2\n",
        1,
    ),
    ("header-keep-indent", b"a: |2+ # h\n   x\n\nb: 1\n", b"a: |2+\n   x\n\nb: 1\n", 1),
    ("header-in-sequence", b"- | # h\n  x\n- >- # i\n  y\n", b"- |\n  x\n- >-\n  y\n", 2),
    # --- 2. less-indented `#` ends a block scalar (h10, F8F9) --------------------------
    (
        "less-indented-comment-ends-scalar",
        b"a:\n  b: |\n    text\n  # real comment\n  c: 1\n",
        b"a:\n  b: |\n    text\n  c: 1\n",
        1,
    ),
    ("column0-comment-after-literal", b"a: |\n  x\n# c\nb: 1\n", b"a: |\n  x\nb: 1\n", 1),
    (
        "F8F9-chomping-with-comment-lines",
        b"# Strip\n  # Comments:\nstrip: |-\n  # text\n  \n # Clip\n  # comments:\n\n"
        b"clip: |\n  # text\n \n # Keep\n  # comments:\n\nkeep: |+\n  # text\n\n"
        b" # Trail\n  # comments.\n",
        b"strip: |-\n  # text\n  \n\nclip: |\n  # text\n \n\nkeep: |+\n  # text\n\n",
        8,
    ),
    (
        "keep-scalar-then-comment-then-key",
        b"a: |+\n  x\n\n# c\nb: 1\n",
        b"a: |+\n  x\n\nb: 1\n",
        1,
    ),
    # --- 3. flow collections (7TMG, h01; spec-invalid but accepted: 9JBA, SU5Z) --------
    (
        "flow-seq-after-comma",
        b"a: [1, # c\n  2, # d\n  3]\n",
        b"a: [1,\n  2,\n  3]\n",
        2,
    ),
    (
        "flow-map-own-line",
        b"a: {\n  # c\n  x: 1, # d\n  y: 2\n}\n",
        b"a: {\n  x: 1,\n  y: 2\n}\n",
        2,
    ),
    ("flow-after-close-no-space", b"a: [x]#c\nb: 1\n", b"a: [x]\nb: 1\n", 1),
    ("quoted-then-hash-no-space", b'a: "v"#c\n', b'a: "v"\n', 1),
    ("flow-open-then-comment", b"[a, # c\n b]\n", b"[a,\n b]\n", 1),
    # --- 4. tabs inside scalars are content (h06) --------------------------------------
    (
        "tab-hash-inside-quotes-and-block",
        b'a: "x\t# y"\nb: |\n  p\t# q\n',
        b'a: "x\t# y"\nb: |\n  p\t# q\n',
        0,
    ),
    # --- 5. markers and directives (2LFX) -----------------------------------------------
    ("doc-start-comment", b"--- # c\na: 1\n", b"---\na: 1\n", 1),
    ("doc-end-comment", b"a: 1\n... # c\n", b"a: 1\n...\n", 1),
    ("yaml-directive-comment", b"%YAML 1.1 # c\n---\nx\n", b"%YAML 1.1\n---\nx\n", 1),
    (
        "reserved-directive-then-comment-lines",
        b'%FOO bar baz # c\n# more\n---\n"foo"\n',
        b'%FOO bar baz\n---\n"foo"\n',
        2,
    ),
    # issue 16: a reserved directive's parameter may hold `#`; only `#` after a blank starts
    # a comment (PyYAML ignores a reserved directive's parameters: the data alone cannot tell)
    ("reserved-directive-hash-in-parameter", b"%FOO a#b\n---\nx\n", b"%FOO a#b\n---\nx\n", 0),
    (
        "reserved-directive-hash-in-parameter-then-comment",
        b"%FOO a#b # c\n---\nx\n",
        b"%FOO a#b\n---\nx\n",
        1,
    ),
    (
        "tag-directive-comment",
        b"%TAG ! tag:x.com,2000: # c\n--- !a 1\n",
        b"%TAG ! tag:x.com,2000:\n--- !a 1\n",
        1,
    ),
    # --- 6. multi-document streams (JHB9, 6ZKB) -----------------------------------------
    (
        "multi-document",
        b"# before\na: 1 # c\n---\n# d\nb: 2\n...\n# e\n--- # f\nc: 3\n",
        b"a: 1\n---\nb: 2\n...\n---\nc: 3\n",
        5,
    ),
    # --- 7. comments in gaps after `key:`, bare `-`, `?` and `:` (X8DW, 5WE3, h11) ----
    ("key-then-nested-map", b"model: # c\n  lr: 1\n", b"model:\n  lr: 1\n", 1),
    ("bare-dash", b"- # c\n  x\n- y # d\n", b"-\n  x\n- y\n", 2),
    ("explicit-key-value", b"? a # c\n: b # d\n", b"? a\n: b\n", 2),
    ("explicit-key-own-line", b"?\n  # c\n  a\n:\n  # d\n  b\n", b"?\n  a\n:\n  b\n", 2),
    # --- 8. BOM (h07) ---------------------------------------------------------------------
    ("bom-whole-line-1", b"\xef\xbb\xbf# c\na: 1\n", b"\xef\xbb\xbfa: 1\n", 1),
    ("bom-indented-line-1", b"\xef\xbb\xbf  # c\na: 1\n", b"\xef\xbb\xbfa: 1\n", 1),
    ("bom-inline-line-1", b"\xef\xbb\xbfa: 1 # c\n", b"\xef\xbb\xbfa: 1\n", 1),
    ("bom-only-comment", b"\xef\xbb\xbf# c", b"\xef\xbb\xbf", 1),
    # --- 9. CRLF (h04) --------------------------------------------------------------------
    (
        "crlf",
        b"# head\r\na: 1 # c\r\n\r\n  # d\r\nb: [1, # e\r\n  2]\r\n",
        b"a: 1\r\n\r\nb: [1,\r\n  2]\r\n",
        4,
    ),
    ("cr-only", b"a: 1 # c\r# d\rb: 2\r", b"a: 1\rb: 2\r", 2),
    # --- 10. no final newline (h04, h05) ------------------------------------------------
    ("no-final-newline-inline", b"a: 1 # c", b"a: 1", 1),
    ("no-final-newline-whole-line", b"a: 1\n# c", b"a: 1\n", 1),
    ("no-final-newline-crlf", b"a: 1\r\n  # c", b"a: 1\r\n", 1),
    # --- 11. YAML 1.1 line breaks ---------------------------------------------------------
    (
        "nel-ls-ps-breaks",
        "a: 1 # c\x85# d\u2028b: 2 # e\u2029c: 3\n".encode(),
        "a: 1\x85b: 2\u2029c: 3\n".encode(),
        3,
    ),
    # --- comment-only and empty files -----------------------------------------------------
    ("comment-only", b"# one\n  # two\n#\n", b"", 3),
    ("comment-only-with-blank-lines", b"# one\n\n# two\n", b"\n", 2),
    ("empty", b"", b"", 0),
    ("only-blank-lines", b"\n\n", b"\n\n", 0),
    # --- the rest of the contract ---------------------------------------------------------
    (
        "blank-lines-and-indentation-kept",
        b"a:    1   # c\n\n\n    # d\nb:\n    - x     # e\n    -   y\n",
        b"a:    1\n\n\nb:\n    - x\n    -   y\n",
        3,
    ),
    ("comment-trailing-spaces", b"a: 1 # c   \n   # d  \t\n", b"a: 1\n", 2),
    ("tab-in-comment-text", b"a: 1 # c\td\n", b"a: 1\n", 1),
    ("hash-run-in-comment", b"a: 1 ## c # d #\n", b"a: 1\n", 1),
    ("empty-comment", b"a: 1 #\n#\n", b"a: 1\n", 2),
    ("non-ascii", "name: café # ☕ noté\n# 日本語\n".encode(), "name: café\n".encode(), 2),
    (
        "anchors-aliases-tags",
        b"a: &x 1 # c\nb: *x # d\nc: !!str 3 # e\nd: &m {k: v} # f\ne:\n  <<: *m # g\n",
        b"a: &x 1\nb: *x\nc: !!str 3\nd: &m {k: v}\ne:\n  <<: *m\n",
        5,
    ),
    ("nan-values", b"a: .nan # c\nb: [.NaN, .inf] # d\n", b"a: .nan\nb: [.NaN, .inf]\n", 2),
    (
        "bools-and-ints",
        b"a: yes # c\nb: 0x1F # d\nc: 1_000 # e\n",
        b"a: yes\nb: 0x1F\nc: 1_000\n",
        3,
    ),
    ("application-tag", b"a: !include base.yaml # c\n", b"a: !include base.yaml\n", 1),
    (
        "comment-between-plain-scalar-lines-is-not-possible-but-after-is",
        b"a: one\n  two # c\nb: 1\n",
        b"a: one\n  two\nb: 1\n",
        1,
    ),
    (
        "multi-line-plain-in-flow",
        b"[a\n b, # c\n d]\n",
        b"[a\n b,\n d]\n",
        1,
    ),
    ("S98Z-over-indented-blank-lines", b"a: >\n \n  \n   \n # c\n", b"a: >\n \n  \n   \n", 1),
]

# (id, input): a tab before `#` (4.): a clear error, the file untouched
TAB_BEFORE: list[tuple[str, bytes]] = [
    ("after-value", b"a: b\t# c\n"),
    ("after-colon", b"a:\t# c\n  b: 1\n"),
    ("line-start", b"\t# c\na: 1\n"),
    ("in-flow", b"a: [1,\t# c\n 2]\n"),
]

# (id, input, a fragment of the message): deleting a comment would change the data (12.)
REFUSED: list[tuple[str, bytes, str]] = [
    ("EB22", b"---\nscalar1 # comment\n%YAML 1.2\n---\n", "'scalar1 %YAML 1.2'"),
    ("h12-keep-chomping", b"a: |+\n  text\n# c\n\nb: 1\n", "'text\\n\\n'"),
    ("keep-chomping-at-end", b"a: |+\n  x\n # c\n\n\n", "'x\\n\\n\\n'"),
    # issue 16: cutting `# c` would move the BOM to the start, where it is no longer
    # content: the document `\ufeff# d` would vanish (a refusal, not `comments_remain`)
    ("bom-moved-to-start", b"# c\n\xef\xbb\xbf# d\n", "turn 1 documents into 0"),
]

# (id, input, reason): not UTF-8 text, binary, or not YAML
INPUT_ERRORS: list[tuple[str, bytes, str]] = [
    ("latin1", b"a: \xff\xfe\n", NOT_UTF8),
    ("latin1-e-acute", "a: é\n".encode("latin-1"), NOT_UTF8),
    ("utf16-bom", "a: 1\n".encode("utf-16"), NOT_UTF8),
    ("png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", BINARY),
    ("nul", b"a: 1\n\x00", BINARY),
    ("bad-indent", b"a: b\n c: d\n", INVALID_YAML),
    ("unclosed-flow", b"a: [1, 2\n", INVALID_YAML),
    ("X4QW-header-hash-no-space", b"key: |#c\n  x\n", INVALID_YAML),
    ("control-character", b"a: \x1b[0m\n", INVALID_YAML),
    ("too-deep", b"[" * 3000 + b"]" * 3000, INVALID_YAML),
]
