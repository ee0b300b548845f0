#!/usr/bin/env bash
# run-tests.sh -- runs Check test binaries one after another, keeps going after a
# failure, and ends with the failing tests' Check lines ("failed: ..."), the failing
# binaries and one summary line: "N passed, N failed".
#   usage: tests/run-tests.sh BINARY...
# CRM_TESTS_NOT_RUN, when set, names suites the build left out on purpose: it is
# printed as a NOT RUN line before the first suite and again after the summary.
set -u
not_run=${CRM_TESTS_NOT_RUN:-}
[ -z "$not_run" ] || echo "NOT RUN: $not_run"
passed=0
failed=0
failed_bins=()
failure_lines=()
for t in "$@"; do
    echo "== $t"
    out=$(CK_FORK=yes "$t" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    summary=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: ' | tail -1)
    if [ -n "$summary" ]; then
        checks=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$summary")
        bad=$(sed -E 's/.*Failures: ([0-9]+), Errors: ([0-9]+).*/\1+\2/' <<<"$summary")
        bad=$((bad))
        passed=$((passed + checks - bad))
        failed=$((failed + bad))
    fi
    if [ $rc -ne 0 ]; then
        failed_bins+=("$t")
        # Check's failure lines (file:line:F|E:case:test:...), repeated at the end so
        # a log cut in the middle still says which test failed and why.
        while IFS= read -r line; do failure_lines+=("$t: $line"); done \
            < <(printf '%s\n' "$out" | grep -E '^[^ ]+:[0-9]+:[FE]:' | head -20)
        [ -n "$summary" ] || failed=$((failed + 1))
    fi
done
[ ${#failure_lines[@]} -eq 0 ] || printf 'failed: %s\n' "${failure_lines[@]}"
[ ${#failed_bins[@]} -eq 0 ] || echo "failing binaries: ${failed_bins[*]}"
echo "$passed passed, $failed failed"
[ -z "$not_run" ] || echo "NOT RUN: $not_run"
[ ${#failed_bins[@]} -eq 0 ]
