# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The vnapi authors
#
# Which tests CI runs on which DPDK series (sourced by .ci/run; the README's
# "DPDK versions" table says the same). Rule: every test that touches an API
# or a behaviour that differs between series runs on every series, which is
# every unit and integration test (ethdev ops, stats, ptypes, rx interrupts,
# secondary processes, pmdinfo, telemetry, net_vhost's behaviour, the
# l3fwd-power example, OVS-DPDK as the back end); the QEMU guest boots (two
# CPUs for ~4 minutes) run on the oldest and the newest series.

vnapi_ci_series=(22.11 23.11 24.11 25.11)

# meson test arguments for series $1 (printed, one a line).
vnapi_ci_meson_args() {
    case "$1" in
    22.11|25.11) ;;
    *) echo --no-suite; echo guest ;;
    esac
}
