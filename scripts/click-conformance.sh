#!/bin/sh
# Runs Click's behavioural test suite (test/*/*.clicktest, run by Click's test/clicktest) with
# Sluice standing in for `click`, and prints how many tests pass in each area (test
# subdirectory) and which fail.
#
# Usage: scripts/click-conformance.sh CLICK_SOURCE_TREE [AREA/TEST.clicktest...]
#
# CLICK_SOURCE_TREE is a configured Click 2.1 tree (for share/click/elementmap.xml and bin/).
# The tests skipped are listed, each with its reason, in scripts/click-conformance-excluded.txt.
# Each test's clicktest output is kept in target/click-conformance/AREA/TEST.log.
# Environment: JOBS (tests run at once, default 2), CLICKTEST_TIMEOUT (seconds, default 45).
# Needs perl; a few tests need nc (netcat-openbsd) and tcpdump.
set -eu

if [ $# -lt 1 ] || ! [ -x "$1/test/clicktest" ]; then
    echo "usage: $0 CLICK_SOURCE_TREE [AREA/TEST.clicktest...]" >&2
    exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
click_tree=$(cd "$1" && pwd)
shift

cargo build --release -q -p sluice-cli --manifest-path "$repo/Cargo.toml"
sluice="${CARGO_TARGET_DIR:-$repo/target}/release/sluice"
case $sluice in /*) ;; *) sluice="$repo/$sluice" ;; esac

if ! [ -f "$click_tree/share/click/elementmap.xml" ]; then
    make -C "$click_tree" -s share/click/elementmap.xml ||
        echo "$0: warning: could not make share/click/elementmap.xml" >&2
fi

logs="${CARGO_TARGET_DIR:-$repo/target}/click-conformance"
case $logs in /*) ;; *) logs="$repo/$logs" ;; esac
rm -rf "$logs"
shim="$logs/shim"
mkdir -p "$shim"

# The stand-ins: `click` and `click-flatten` are Sluice; `click-buildtool provides` answers yes
# except for the kernel, ns and MiniOS drivers; `usleep` sleeps.
cat >"$shim/click" <<EOF
#!/bin/sh
exec "$sluice" "\$@"
EOF
cat >"$shim/click-flatten" <<EOF
#!/bin/sh
exec "$sluice" flatten "\$@"
EOF
cat >"$shim/click-buildtool" <<'EOF'
#!/bin/sh
[ "${1:-}" = provides ] || exit 1
shift
for feature in "$@"; do
    case $feature in
    linuxmodule | bsdmodule | ns | nsmodule | minios) exit 1 ;;
    esac
done
exit 0
EOF
cat >"$shim/usleep" <<'EOF'
#!/bin/sh
exec sleep "$(awk "BEGIN { print ${1:-0} / 1000000 }")"
EOF
chmod +x "$shim/click" "$shim/click-flatten" "$shim/click-buildtool" "$shim/usleep"

if [ $# -gt 0 ]; then
    tests="$*"
else
    grep -v '^#' "$repo/scripts/click-conformance-excluded.txt" | awk 'NF { print $1 }' \
        >"$logs/excluded"
    tests=$(cd "$click_tree/test" && ls ./*/*.clicktest | sed 's|^\./||' |
        grep -vxF -f "$logs/excluded")
fi

# One clicktest run per test, JOBS at a time; each run's last line says
# "N successes, N failures, N skipped".
export click_tree shim logs
printf '%s\n' $tests | xargs -P "${JOBS:-2}" -I{} sh -c '
    t={}
    mkdir -p "$logs/$(dirname "$t")"
    cd "$click_tree"
    perl test/clicktest -t "${CLICKTEST_TIMEOUT:-45}" -p "$shim" -p "$click_tree/bin" \
        CLICKPATH="$click_tree:" CLICKTEST_PREINSTALL=1 "test/$t" >"$logs/$t.log" 2>&1 || true
    if grep -q " 1 success, 0 failures, 0 skipped" "$logs/$t.log"; then r=pass
    elif grep -q " 0 failures, 1 skipped" "$logs/$t.log"; then r=skip
    else r=fail
    fi
    echo "$t $r" >"$logs/$t.result"
'

cat "$logs"/*/*.result | sort >"$logs/results"
echo "Click conformance: Sluice against Click's test suite ($click_tree)"
awk '
    { split($1, p, "/"); area[p[1]] = 1; n[p[1]]++; c[p[1], $2]++; tot[$2]++; all++ }
    END {
        for (a in area)
            printf "  %-12s %3d of %3d pass  (%d fail, %d skipped by their %%require)\n",
                a, c[a, "pass"], n[a] - c[a, "skip"], c[a, "fail"], c[a, "skip"] | "sort"
        close("sort")
        printf "  %-12s %3d of %3d pass  (%d fail, %d skipped by their %%require)\n",
            "total", tot["pass"], all - tot["skip"], tot["fail"], tot["skip"]
    }' "$logs/results"
[ -f "$logs/excluded" ] && echo "  excluded: $(wc -l <"$logs/excluded") (scripts/click-conformance-excluded.txt)"
if grep -q ' fail$' "$logs/results"; then
    echo "Failing (clicktest output in $logs/AREA/TEST.log):"
    grep ' fail$' "$logs/results" | sed 's/ fail$//; s/^/  /'
fi
