#!/usr/bin/env bash
# The push job's history: measures the newest commits of main that the store on the data
# branch lacks (`lab history` measures only what its store is missing), redraws the trend page
# and commits both to the branch, so the page grows by itself with every push. The store is
# keyed by machine, toolchain and settings, so runners of different CPU models become separate
# NPS lines on one page. Prints the history as markdown (for the job summary).
# Usage: history-append.sh BRANCH MAX_COMMITS   (run from the repository's root, on main;
# LAB=/path/to/lab uses a built lab instead of `cargo run --profile lab-release`)
set -euo pipefail
branch=$1 max=$2
store=lab-history-store

if git fetch --quiet origin "refs/heads/$branch:refs/remotes/origin/$branch" 2>/dev/null; then
  git worktree add --quiet -B "$branch" "$store" "origin/$branch"
else
  echo "(the $branch branch does not exist yet: starting it)" >&2
  git worktree add --quiet --orphan -b "$branch" "$store"
fi

root=$(git rev-list --max-parents=0 HEAD | tail -n 1)
# The range excludes its start, so the root commit itself is never measured; nobody benches it.
if [ -n "${LAB:-}" ]; then lab=("$LAB"); else lab=(cargo run --profile lab-release -p squall-lab --); fi
"${lab[@]}" history "$root..HEAD" --max "$max" \
  --store "$store/store" --format markdown \
  --export-json "$store/history.json" --export-html "$store/index.html"

cd "$store"
git add --all
if git diff --cached --quiet; then
  echo "(no new commits to store)" >&2
  exit 0
fi
git -c user.name="squall-lab history" -c user.email="lab-history@users.noreply.github.com" \
  commit --quiet -m "history up to $(git -C .. rev-parse --short HEAD)"
git push --quiet origin "HEAD:refs/heads/$branch"
