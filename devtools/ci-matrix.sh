# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Which tests CI runs on which DPDK series (sourced by .ci/run; the README's
# "DPDK versions" table says the same). The rule: every test that touches an
# API or a behaviour that differs between series runs on every series: the
# unit suite, and every integration test of the driver's ethdev ops, stats,
# packet types, rx interrupts (every queue), secondary processes, pmdinfo,
# telemetry, net_vhost's behaviour (reconnect, server mode, offloads), the
# l3fwd-power example, testpmd and lib/napi. Run once, on the system's 22.11:
#   suite 'variant': ring-layout variants of a test that runs everywhere in
#     its base form (in_order=0, indirect=0, mergeable off; lib/virtq's code,
#     the same on every series), and the net_virtio_user reference rows whose
#     vnapi row runs everywhere;
#   suite 'ovs': OVS-DPDK as the back end: Debian's openvswitch-switch-dpdk
#     is built on 22.11, the only series that has an OVS here;
#   suite 'icount': the instruction-count gate, whose baseline
#     (tests/icount/baseline.json) is measured on the system's 22.11;
#   the ASan+UBSan build: the unit suite and devtools/test.sh's sanitized_tests
#   (those run on every series unsanitized).
# The QEMU guest boots (both CPUs, about a minute each) run on the oldest and
# the newest series: all of them on 22.11, on 25.11 those of suite
# 'guest_core' (split ring with l3fwd-power, hybrid and a secondary process;
# two queue pairs with MSI-X interrupts on queue 1).

vnapi_ci_series=(22.11 23.11 24.11 25.11)

# devtools/test.sh arguments for series $1 (printed, one a line).
vnapi_ci_test_args() {
    case "$1" in
    22.11) ;;
    25.11) printf '%s\n' --no-asan --no-suite variant --no-suite ovs --no-suite icount --no-suite guest_extra ;;
    *) printf '%s\n' --no-asan --no-suite variant --no-suite ovs --no-suite icount --no-suite guest ;;
    esac
}
