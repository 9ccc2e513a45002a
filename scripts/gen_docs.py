#!/usr/bin/env python3
"""Generate the man pages, shell completions and README command reference FROM THE CLI.

    python scripts/gen_docs.py          # write man/, completions/, README reference
    python scripts/gen_docs.py --check  # exit 1 and list files that drifted from the code

Everything comes from labctl.introspect (the command table, the typer parameters and
each command's SCHEMAS/EXAMPLES), so docs cannot disagree with the code.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from labctl import __version__  # noqa: E402
from labctl.cli import common_params  # noqa: E402
from labctl.introspect import describe_all, describe_param  # noqa: E402

README_BEGIN = "<!-- BEGIN GENERATED COMMAND REFERENCE (scripts/gen_docs.py) -->"
README_END = "<!-- END GENERATED COMMAND REFERENCE -->"
COMMON = {p.name for p in common_params()}
EXIT_ROWS = [
    ("0", "the command ran and found nothing that needs a person"),
    (
        "1",
        "it found something that needs a person (failed or stalled job, failed check, "
        "unverifiable file, malformed input line)",
    ),
    ("2", "usage or configuration error; nothing was done"),
    (
        "3",
        "a backend (cluster, database, service, lock) was partly or wholly unreachable; "
        "what could be done was done and the rest is in error records",
    ),
    ("130", "interrupted"),
]
ENVIRONMENT = [
    ("LABCTL_CONFIG", "config file path (else $XDG_CONFIG_HOME/labctl/config.toml)"),
    ("LABCTL_FORMAT", "default output format"),
    ("LABCTL_STATE_DIR", "state directory (else $XDG_STATE_HOME/labctl)"),
    ("XDG_CONFIG_HOME, XDG_STATE_HOME", "base directories"),
    ("GITHUB_TOKEN, GH_TOKEN, GITHUB_API_URL", "GitHub credentials and API URL"),
    ("HF_TOKEN, HF_ENDPOINT", "Hugging Face Hub credentials and URL"),
    ("WANDB_API_KEY, WANDB_BASE_URL", "Weights & Biases credentials and URL"),
    ("SUPABASE_URL, SUPABASE_KEY, DATABASE_URL", "results database"),
    ("NO_COLOR", "no colour in tables"),
    ("LABCTL_DEBUG", "show a traceback for an internal error"),
]


def roff(text: str) -> str:
    out = text.replace("\\", "\\\\").replace("-", "\\-")
    lines = []
    for line in out.splitlines():
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def _flags(p: dict[str, Any]) -> str:
    flags = ", ".join(p["flags"]) if p["kind"] == "option" else p["name"].upper()
    schema = p["schema"]
    if p["kind"] == "option" and not p["is_flag"]:
        if "enum" in schema or "enum" in schema.get("items", {}):
            enum = schema.get("enum") or schema["items"]["enum"]
            flags += " {" + "|".join(enum) + "}"
        else:
            flags += " " + ("PATH" if schema.get("format") == "path" else "VALUE")
    return flags


def _option_section(params: list[dict[str, Any]], title: str = "OPTIONS") -> list[str]:
    out = [f".SH {title}"]
    for p in params:
        if p["hidden"]:
            continue
        out += [".TP", f".B {roff(_flags(p))}", roff(p["help"] or "")]
    return out


def _records_section(records: dict[str, Any]) -> list[str]:
    out = [
        ".SH RECORDS",
        "Printed as JSON Lines (one object per line) unless "
        "\\-\\-format says otherwise; \\fBlabctl schema\\fR prints the JSON Schemas.",
    ]
    for kind, schema in records.items():
        fields = [k for k in schema.get("properties", {}) if k != "kind"]
        out += [".TP", f".B {roff(kind)}", roff(schema.get("description", ""))]
        if fields:
            out += [".br", roff("Fields: " + ", ".join(fields))]
    return out


def _exit_section() -> list[str]:
    out = [".SH EXIT STATUS"]
    for code, text in EXIT_ROWS:
        out += [".TP", f".B {code}", roff(text)]
    return out


def man_main(commands: list[dict[str, Any]]) -> str:
    head = f'.TH LABCTL 1 "" "labctl {__version__}" "labctl manual"'
    out = [
        head,
        ".SH NAME",
        "labctl \\- small commands that keep an ML lab's jobs moving",
        ".SH SYNOPSIS",
        ".B labctl",
        "[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]",
        ".SH DESCRIPTION",
        roff(
            "Each command does one job and prints JSON Lines when its output is not a "
            "terminal (a box-drawing table when it is), so commands pipe together and "
            "run from cron: labctl poll | labctl diagnose | labctl table."
        ),
        ".SH COMMANDS",
    ]
    for c in commands:
        out += [
            ".TP",
            f".B {roff(c['name'])}",
            roff(c["summary"]) + f" See \\fBlabctl\\-{roff(c['name'])}\\fR(1).",
        ]
    common = [describe_param(p) for p in common_params()]
    out += _option_section(common, "GLOBAL OPTIONS")
    out += [".TP", ".B \\-\\-version", "Print the version and exit."]
    out += _exit_section()
    out += [".SH ENVIRONMENT"]
    for name, text in ENVIRONMENT:
        out += [".TP", f".B {roff(name)}", roff(text)]
    out += [
        ".SH FILES",
        ".TP",
        ".I $XDG_CONFIG_HOME/labctl/config.toml",
        "The config file (TOML); \\fBlabctl config init\\fR writes a complete one.",
        ".TP",
        ".I $XDG_STATE_HOME/labctl/",
        "State between runs (what the last poll saw).",
    ]
    out += [".SH SEE ALSO", ", ".join(f"\\fBlabctl\\-{roff(c['name'])}\\fR(1)" for c in commands)]
    return "\n".join(out) + "\n"


def man_command(c: dict[str, Any]) -> str:
    name = c["name"]
    out = [
        f'.TH LABCTL\\-{roff(name.upper())} 1 "" "labctl {__version__}" "labctl manual"',
        ".SH NAME",
        f"labctl\\-{roff(name)} \\- {roff(c['summary'])}",
        ".SH SYNOPSIS",
        f".B labctl {roff(name)}",
    ]
    args = [p for p in c["params"] if p["kind"] == "argument"]
    out.append("[\\fIOPTIONS\\fR]" + "".join(f" [\\fI{p['name'].upper()}\\fR...]" for p in args))
    out += [".SH DESCRIPTION", roff(c["help"])]
    own = [p for p in c["params"] if p["name"] not in COMMON]
    if own:
        out += _option_section(own)
    for sub in c["subcommands"]:
        out += [f".SH COMMAND: {roff(name)} {roff(sub['name'])}", roff(sub["help"])]
        for p in sub["params"]:
            if p["name"] in COMMON or p["hidden"]:
                continue
            out += [".TP", f".B {roff(_flags(p))}", roff(p["help"] or "")]
    out += [
        ".SS Global options",
        roff("Every command also takes --format, --config, --quiet and --summary; see labctl(1)."),
    ]
    out += _records_section(c["records"])
    out += _exit_section()
    if c["examples"]:
        out += [".SH EXAMPLES"]
        for ex in c["examples"]:
            out += [".PP", ".nf", roff(ex), ".fi"]
    out += [".SH SEE ALSO", "\\fBlabctl\\fR(1)"]
    return "\n".join(out) + "\n"


def _value_words(p: dict[str, Any]) -> str | None:
    schema = p["schema"].get("items", p["schema"])
    if "enum" in schema:
        return " ".join(schema["enum"])
    return None


def _is_path(p: dict[str, Any]) -> bool:
    return p["schema"].get("items", p["schema"]).get("format") == "path"


def _all_params(c: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in c["params"] if not p["hidden"]]


def _value_flags(commands: list[dict[str, Any]]) -> list[str]:
    """Every flag that takes a value (so the word after it is not a command)."""
    params = [describe_param(p) for p in common_params()]
    for c in commands:
        params += _all_params(c) + [q for s in c["subcommands"] for q in s["params"]]
    flags = {f for p in params if p["kind"] == "option" and not p["is_flag"] for f in p["flags"]}
    return sorted(flags)


def bash_completion(commands: list[dict[str, Any]]) -> str:
    names = " ".join(c["name"] for c in commands)
    common = [describe_param(p) for p in common_params()]
    glob_opts = " ".join(f for p in common for f in p["flags"]) + " --version --help"
    lines = [
        "# bash completion for labctl (generated by scripts/gen_docs.py; do not edit)",
        "_labctl() {",
        "  local cur prev cmd sub i",
        '  cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"',
        '  cmd=""; sub=""',
        "  for ((i=1; i<COMP_CWORD; i++)); do",
        '    case "${COMP_WORDS[i]}" in',
        f"      {'|'.join(_value_flags(commands))}) ((i++)) ;;",
        "      -*) ;;",
        '      *) if [[ -z $cmd ]]; then cmd="${COMP_WORDS[i]}"; elif [[ -z $sub ]]; then sub="${COMP_WORDS[i]}"; fi ;;',  # noqa: E501
        "    esac",
        "  done",
        '  case "$prev" in',
    ]
    value_cases: dict[str, str] = {}
    for c in commands:
        for p in _all_params(c) + [q for s in c["subcommands"] for q in s["params"]]:
            if p["kind"] != "option" or p["is_flag"]:
                continue
            words = _value_words(p)
            action = (
                f'COMPREPLY=($(compgen -W "{words}" -- "$cur")); return'
                if words
                else 'COMPREPLY=($(compgen -f -- "$cur")); return'
            )
            for flag in p["flags"]:
                value_cases.setdefault(flag, action)
    for flag, action in sorted(value_cases.items()):
        lines.append(f"    {flag}) {action} ;;")
    lines += [
        "  esac",
        '  case "$cmd" in',
        f'    "") COMPREPLY=($(compgen -W "{names} {glob_opts}" -- "$cur")) ;;',
    ]
    for c in commands:
        opts = " ".join(f for p in _all_params(c) if p["kind"] == "option" for f in p["flags"])
        if c["subcommands"]:
            subs = " ".join(s["name"] for s in c["subcommands"])
            lines.append(f"    {c['name']})")
            lines.append('      case "$sub" in')
            lines.append(f'        "") COMPREPLY=($(compgen -W "{subs} --help" -- "$cur")) ;;')
            for s in c["subcommands"]:
                sopts = " ".join(
                    f for p in s["params"] if p["kind"] == "option" for f in p["flags"]
                )
                lines.append(
                    f'        {s["name"]}) COMPREPLY=($(compgen -W "{sopts} --help" -- "$cur")) ;;'
                )
            lines.append("      esac ;;")
            continue
        args = [p for p in _all_params(c) if p["kind"] == "argument"]
        extra = ""
        if c["name"] == "schema":
            extra = f" {names}"
        elif any(_is_path(p) for p in args):
            extra = ' $(compgen -f -- "$cur")'
        lines.append(
            f'    {c["name"]}) COMPREPLY=($(compgen -W "{opts} --help{extra}" -- "$cur")) ;;'
        )
    lines += ["  esac", "}", "complete -o default -F _labctl labctl", ""]
    return "\n".join(lines)


def _zsh_escape(text: str) -> str:
    return text.replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def _zsh_specs(params: list[dict[str, Any]]) -> list[str]:
    specs = []
    for p in params:
        if p["hidden"]:
            continue
        help_text = _zsh_escape((p["help"] or "").split(". ")[0])
        if p["kind"] == "argument":
            action = "_files" if _is_path(p) else " "
            specs.append(f"'*:{p['name']}:{action}'")
            continue
        flags = p["flags"]
        group = "{" + ",".join(flags) + "}" if len(flags) > 1 else flags[0]
        excl = "(" + " ".join(flags) + ")" if len(flags) > 1 else ""
        if p["is_flag"]:
            specs.append(f"'{excl}'{group}'[{help_text}]'")
        else:
            words = _value_words(p)
            action = f"({words})" if words else "_files"
            specs.append(f"'{excl}'{group}'[{help_text}]:value:{action}'")
    return specs


def zsh_completion(commands: list[dict[str, Any]]) -> str:
    out = [
        "#compdef labctl",
        "# zsh completion for labctl (generated by scripts/gen_docs.py; do not edit)",
        "_labctl() {",
        "  local curcontext=$curcontext state line",
        "  typeset -A opt_args",
        "  local -a commands",
        "  commands=(",
    ]
    for c in commands:
        out.append(f"    '{c['name']}:{_zsh_escape(c['summary'])}'")
    out += ["  )", "  _arguments -C \\", "    '--version[print the version]' \\"]
    for spec in _zsh_specs([describe_param(p) for p in common_params()]):
        out.append(f"    {spec} \\")
    out += [
        "    '1: :->command' \\",
        "    '*:: :->args'",
        "  case $state in",
        "    command) _describe -t commands 'labctl command' commands ;;",
        "    args)",
        "      case $words[1] in",
    ]
    for c in commands:
        if c["subcommands"]:
            subs = " ".join(
                f"'{s['name']}:{_zsh_escape(s['help'].splitlines()[0] if s['help'] else s['name'])}'"  # noqa: E501
                for s in c["subcommands"]
            )
            out.append(
                f"        {c['name']}) local -a subs; subs=({subs}); _describe -t subs 'subcommand' subs ;;"  # noqa: E501
            )
            continue
        specs = " ".join(_zsh_specs(_all_params(c)))
        if c["name"] == "schema":
            specs = specs.replace(
                "'*:commands: '", "'*:command:(" + " ".join(x["name"] for x in commands) + ")'"
            )
        out.append(f"        {c['name']}) _arguments {specs} ;;")
    out += ["      esac ;;", "  esac", "}", '_labctl "$@"', ""]
    return "\n".join(out)


def _fish_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def fish_completion(commands: list[dict[str, Any]]) -> str:
    names = " ".join(c["name"] for c in commands)
    out = [
        "# fish completion for labctl (generated by scripts/gen_docs.py; do not edit)",
        "complete -c labctl -f",
        "complete -c labctl -n '__fish_use_subcommand' -l version -d 'Print the version'",
    ]
    for c in commands:
        out.append(
            f"complete -c labctl -n '__fish_use_subcommand' -a {c['name']} -d '{_fish_escape(c['summary'])}'"  # noqa: E501
        )
    for c in commands:
        cond = f"__fish_seen_subcommand_from {c['name']}"
        for s in c["subcommands"]:
            out.append(
                f"complete -c labctl -n '{cond}; and not __fish_seen_subcommand_from "
                f"{' '.join(x['name'] for x in c['subcommands'])}' -a {s['name']} "
                f"-d '{_fish_escape((s['help'] or s['name']).splitlines()[0])}'"
            )
        for p in _all_params(c) + [
            q for s in c["subcommands"] for q in s["params"] if q["name"] not in COMMON
        ]:
            if p["kind"] == "argument":
                if c["name"] == "schema":
                    out.append(f"complete -c labctl -n '{cond}' -a '{names}'")
                elif _is_path(p):
                    out.append(f"complete -c labctl -n '{cond}' -F")
                continue
            parts = [f"complete -c labctl -n '{cond}'"]
            for flag in p["flags"]:
                parts.append(f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}")
            if not p["is_flag"]:
                words = _value_words(p)
                parts.append(f"-x -a '{words}'" if words else "-r -F")
            parts.append(f"-d '{_fish_escape((p['help'] or '').split('. ')[0])}'")
            out.append(" ".join(parts))
    return "\n".join(dict.fromkeys(out)) + "\n"


def readme_reference(commands: list[dict[str, Any]]) -> str:
    out = [README_BEGIN, "", "| command | what it does | records |", "|---|---|---|"]
    for c in commands:
        kinds = ", ".join(f"`{k}`" for k in c["records"] if k not in ("error", "summary"))
        out.append(f"| `labctl {c['name']}` | {c['summary']} | {kinds or '—'} |")
    out += [
        "",
        "Every command takes `--format auto|jsonl|json|table`, `--config PATH`, "
        "`--quiet` and `--summary`; `labctl COMMAND --help` and `man labctl-COMMAND` "
        "have the details, `labctl schema COMMAND` the JSON Schemas.",
        "",
        "Exit codes:",
        "",
    ]
    out += [f"- `{code}`: {text}" for code, text in EXIT_ROWS]
    out += ["", README_END]
    return "\n".join(out)


def outputs() -> dict[Path, str]:
    commands = describe_all()
    files = {ROOT / "man" / "labctl.1": man_main(commands)}
    for c in commands:
        files[ROOT / "man" / f"labctl-{c['name']}.1"] = man_command(c)
    files[ROOT / "completions" / "labctl.bash"] = bash_completion(commands)
    files[ROOT / "completions" / "_labctl"] = zsh_completion(commands)
    files[ROOT / "completions" / "labctl.fish"] = fish_completion(commands)
    readme = ROOT / "README.md"
    if readme.exists():
        text = readme.read_text()
        if README_BEGIN in text and README_END in text:
            head, rest = text.split(README_BEGIN, 1)
            _, tail = rest.split(README_END, 1)
            files[readme] = head + readme_reference(commands) + tail
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if anything drifted")
    args = parser.parse_args()
    drifted = []
    files = outputs()
    stale = [p for p in (ROOT / "man").glob("labctl*.1") if p not in files]
    for path, text in files.items():
        current = path.read_text() if path.exists() else None
        if current != text:
            drifted.append(path)
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    for path in stale:
        drifted.append(path)
        if not args.check:
            path.unlink()
    for path in drifted:
        print(f"{'drifted' if args.check else 'wrote'}: {path.relative_to(ROOT)}")
    return 1 if (args.check and drifted) else 0


if __name__ == "__main__":
    raise SystemExit(main())
