#!/usr/bin/env bash
# Which registers a kernel holds live at one instruction, and where each got its value:
# for finding what keeps a kernel above a register cap (ptxas spills or lower occupancy)
# on a machine without a GPU.
#
#   scripts/sass-live.sh <module filter> <kernel> [<address>]
#
# <module filter> as scripts/sass.sh takes it (e.g. "radix_sort.cu keys 4B values 0B";
# GPUPRIMS_TUNE applies). Without <address>, lists the kernel's spills (STL/LDL) and its
# peak liveness; with a hex address (e.g. 2b90), the registers live there, each with the
# last instruction above it that writes it (a value defined further down and live around
# a loop's back edge shows its definition in the previous pass, or nothing).
set -euo pipefail
filter=${1:?usage: scripts/sass-live.sh <module filter> <kernel> [<address>]}
kernel=${2:?usage: scripts/sass-live.sh <module filter> <kernel> [<address>]}
address=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$here/sass.sh" "$filter" "$out" >/dev/null
tools=${XDG_CACHE_HOME:-$HOME/.cache}/gpuprims-sass-tools/nvidia/cu13/bin
command -v nvdisasm >/dev/null || export PATH="$tools:$PATH"
cubins=("$out"/*.cubin)
[ "${#cubins[@]}" -eq 1 ] || { echo "the filter matches ${#cubins[@]} modules; narrow it to one" >&2; exit 2; }
nvdisasm -plr -lrm narrow "${cubins[0]}" | awk -v k=".text.$kernel" '
    /^\/\/-+ \.text\./ { on = ($2 == k) } on' >"$out/live.txt"
[ -s "$out/live.txt" ] || { echo "no kernel $kernel in the module" >&2; exit 2; }
python3 - "$out/live.txt" "$address" <<'PY'
import re, sys
path, address = sys.argv[1], sys.argv[2]
rows = []
for line in open(path):
    m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;?\s*//\s*\|\s*(\d+)\s(.*?)\|', line)
    if m:
        rows.append((int(m.group(1), 16), m.group(2).strip(), int(m.group(3)), m.group(4)))
if not address:
    for a, text, n, _ in rows:
        if re.search(r'\b(STL|LDL)\b', text):
            print(f'{a:05x}  {text}')
    peak = max(n for _, _, n, _ in rows)
    print(f'peak: {peak} registers live, at ' + ' '.join(f'{a:x}' for a, _, n, _ in rows if n == peak)[:200])
    sys.exit(0)
target = int(address, 16)
at = [i for i, r in enumerate(rows) if r[0] == target]
if not at:
    sys.exit(f'no instruction at {address}')
i = at[0]
live = [r for r, ch in enumerate(rows[i][3]) if ch in ':xv^']
print(f'{len(live)} registers live at {address}: {rows[i][1]}')
def writes(text, reg):
    t = re.sub(r'^@!?U?P\w+\s+', '', text)
    parts = t.split(None, 1)
    if len(parts) < 2 or parts[0].startswith(('ST', 'RED', 'ISETP', 'FSETP', 'BRA', 'BAR')):
        return False
    m = re.match(r'R(\d+)', parts[1].split(',')[0].strip())
    if not m:
        return False
    width = 4 if '.128' in parts[0] else 2 if ('.64' in parts[0] or 'WIDE' in parts[0]) else 1
    return int(m.group(1)) <= reg < int(m.group(1)) + width
for reg in live:
    src = next((rows[j] for j in range(i - 1, -1, -1) if writes(rows[j][1], reg)), None)
    print(f'  R{reg:<3} ' + (f'{src[0]:05x}  {src[1]}' if src else '(no write above)'))
PY
