#!/bin/sh
# The connector image's entrypoint: runs `gtidmark "$@"` and passes SIGTERM (and SIGINT) on.
# Exit 2 means the configuration or the server's settings were refused (the line above
# says which key and why): restarting cannot fix that, so it becomes exit 0 and compose's
# `restart: on-failure` leaves the container stopped. Any other failure exits as it came,
# so exit 1 (a start the broker did not answer) is restarted from the committed offsets.
# GTIDMARK_COMMAND replaces `gtidmark` (the tests run the wrapper around a fake command).
set -u
child='' pending='' trapped=''
# Traps first: a signal that comes before the command has started is passed on once it has.
forward() {
    if [ -n "$child" ] && [ -n "$pending" ]; then
        kill "-$pending" "$child" 2>/dev/null
        pending=''
    fi
}
trap 'trapped=1 pending=TERM; forward' TERM
# A background command starts with SIGINT ignored (POSIX), so Ctrl-C is passed on as TERM.
trap 'trapped=1 pending=TERM; forward' INT
"${GTIDMARK_COMMAND:-gtidmark}" "$@" &
child=$!
forward
# `wait` returns 128+n once a trapped signal has come, even when the command ended at that
# moment and dash has reaped it (`kill -0` cannot tell): after a trap, wait again, which
# gives the command's status once it has ended (dash). A shell that forgets a status it
# gave answers the second wait with 127 or, bash 5.2, -1; the status given first then holds.
status=''
while :; do
    trapped=''
    wait "$child"
    code=$?
    if [ -n "$status" ] && { [ "$code" -eq 127 ] || [ "$code" -lt 0 ]; }; then break; fi
    status=$code
    if [ -z "$trapped" ]; then break; fi
done
if [ "$status" -eq 2 ]; then
    echo "gtidmark refused to start (exit 2): not restarting; fix the configuration or the server settings named above, then start the container again" >&2
    exit 0
fi
exit "$status"
