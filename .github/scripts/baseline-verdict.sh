#!/usr/bin/env bash
# The push job's judgement of `lab baseline check`: prints the markdown report and what this
# runner could judge (for the job summary) and exits non-zero unless something was judged and
# nothing regressed. It never passes silently:
# - the baseline's NPS comes from the machine that saved it; on another machine (a GitHub
#   runner, usually) speed is shown but not judged, and the summary says so;
# - instructions per node are judged on any machine with the pinned toolchain
#   (rust-toolchain.toml) while the search is the baseline's (same node signature); a changed
#   search is not a cost per node, so they are shown but not judged, as the lab does. When
#   neither speed nor instructions can be judged, the job fails.
# Usage: baseline-verdict.sh REPORT.json REPORT.md LAB_EXIT_CODE
set -euo pipefail
json=$1 markdown=$2 code=$3

[ -f "$markdown" ] && cat "$markdown"
echo
echo "### What this runner judged"
if [ "$code" -ge 2 ] || [ ! -s "$json" ]; then
  echo "**lab baseline check failed (exit $code)**: nothing was judged; see the job log."
  exit "$(( code >= 2 ? code : 2 ))"
fi

field() { jq -r "$1" "$json"; }
speed_comparable=$(field '.speed.comparable')
instructions_comparable=$(field '.instructions.comparable')
per_node=$(field '.instructions.per_node_ratio')
signature_comparable=$(field '.signature.comparable')
signature_changed=$(field '.signature.changed')

judged=()
instructions_judged=false
if [ "$speed_comparable" = true ]; then
  judged+=("NPS")
else
  echo "- **No trustworthy NPS baseline for this runner:**" \
    "$(field '[.warnings[] | select(startswith("NPS is not comparable"))][0] // "the baseline was measured elsewhere."')" \
    "Judging instructions only; save a baseline on this machine class to judge speed (docs/ci.md)."
fi
if [ "$signature_comparable" = true ] && [ "$signature_changed" != true ]; then
  judged+=("node signature (unchanged)")
fi
if [ "$instructions_comparable" != true ]; then
  echo "- **Instructions were not judged**: the toolchain differs from the baseline's."
elif [ "$per_node" = null ]; then
  echo "- **Instructions were not judged**: callgrind did not run."
elif [ "$signature_changed" = true ]; then
  echo "- **Instructions were not judged**: the search changed (bench signature" \
    "$(field '.signature.a') → $(field '.signature.b') nodes), so instructions per node are not" \
    "the same work. Judge the change with \`lab verdict\` (docs/verdict.md) and save the" \
    "baseline again."
else
  judged+=("instructions per node")
  instructions_judged=true
fi

if [ "$speed_comparable" != true ] && [ "$instructions_judged" != true ]; then
  echo "- **Failing: neither speed nor instructions could be judged** against the baseline."
  exit 1
fi
printf -- '- Judged: %s.\n' "$(IFS=,; echo "${judged[*]}" | sed 's/,/, /g')"
if [ "$code" -eq 1 ]; then
  echo "- **Regression** (verdict: $(field '.verdict'))."
  exit 1
fi
echo "- Verdict: $(field '.verdict')."
