#!/usr/bin/env python3
"""Fails when include/gpuprims.h defines an identifier that does not start with
gpuprims_ or GPUPRIMS_ (a C program that defines the same name before the include
would break). Lists what the header defines: macros, struct, enum and typedef names,
functions, enumerators. Usage: check-header-names.py [header] (default include/gpuprims.h)."""
import re
import sys

ALLOWED = ("gpuprims_", "GPUPRIMS_")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def defined_names(text):
    """(kind, name) of every identifier the header defines."""
    names = [("macro", m) for m in re.findall(r"^\s*#\s*define\s+(\w+)", text, flags=re.M)]
    code = re.sub(r"^[ \t]*#(?:\\\n|[^\n])*", " ", text, flags=re.M)  # preprocessor lines out
    code = code.replace('extern "C"', " ")
    names += [("struct/enum/union", m) for m in re.findall(r"\b(?:struct|enum|union)\s+(\w+)", code)]
    # A struct's or union's members are its own scope, not names the header defines.
    flat = re.sub(r"\b(struct|union)(\s+\w+)?\s*\{[^{}]*\}", r"\1\2", code)
    for decl in flat.split(";"):
        decl = decl.strip()
        if decl.startswith("typedef"):
            fn_ptr = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
            names.append(("typedef", fn_ptr.group(1) if fn_ptr else re.findall(r"(\w+)\s*(?:\[[^\]]*\])?\s*$", decl)[0]))
        else:
            fn = re.search(r"(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$", decl)
            if fn:
                names.append(("function", fn.group(1)))
    for body in re.findall(r"\benum\b[^{;]*\{([^}]*)\}", code):
        names += [("enumerator", m) for m in re.findall(r"(\w+)\s*(?:=[^,]*)?(?:,|$)", body)]
    return names


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "include/gpuprims.h"
    names = defined_names(strip_comments(open(path, encoding="utf-8").read()))
    bad = sorted({(k, n) for k, n in names if not n.startswith(ALLOWED)})
    print(f"{path}: {len(names)} names defined, {len(bad)} outside gpuprims_/GPUPRIMS_")
    for kind, name in bad:
        print(f"  {kind}: {name}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
