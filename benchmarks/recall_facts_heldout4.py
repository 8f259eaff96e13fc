"""A fourth held-out set of planted facts for the recall probe, written for the paraphrase work.

The project is "skyward", an observatory's night-scheduling system: a Go scheduler service that
queues observations for three telescopes (sched/), a Python reduction pipeline on Astropy and Dask
(pipeline/), Rust firmware for the dome and shutter controller (dome/), NATS for messages between
them, TimescaleDB for the weather and telemetry history, and Ansible with systemd units on the
site's own machines (ops/). Each fact is one tool output of that project (a file read, a shell
command, a grep) with one short verbatim answer in it, among other values of the same kind, and
three questions a developer might ask about it long after the output left the context: a direct one
that may name the file or command, a paraphrase in the developer's own words (other words than the
output's wherever a developer would use other words), and a short vague one. None of the questions
holds its answer.

Written 2026-12-05, before the ranking change it was made to judge (the paraphrase work of issue 37
item 6), by the engineer making that change, who had read the search code but not the other sets'
misses; it was committed before any ranking change, and nothing is tuned on it: the probe gives its
rates and never prints its misses (it is not in `recall_probe.HELD_OUT`). It is smaller than the
other sets (23 facts): it was written in one sitting.

`distractors(seed, count)` makes look-alike outputs of the same project (other configs, other
units, passing runs, other greps and logs) that hold no answer and none of the facts' paths or
commands; the same seed gives the same scenes.
"""

# ruff: noqa: E501  (tool outputs are quoted as the tools print them)
from __future__ import annotations

import random
from collections.abc import Callable

from benchmarks.recall_facts_heldout import PlantedFact, Scene, bash_scene, draw, grep_scene, read_scene

_FACTS: list[PlantedFact] = []


def _plant(scene: Scene, answer: str, direct: str, paraphrase: str, vague: str) -> None:
    _FACTS.append(PlantedFact(scene, answer, (direct, paraphrase, vague)))


# --- file reads ----------------------------------------------------------------------------------

_plant(
    read_scene(
        "sched/config/scheduler.yaml",
        """\
# Skyward night scheduler: how observations are queued and handed to the telescopes.
service:
  name: skyward-sched
  grpc_port: 7311
  http_port: 7380
  log_level: info

queue:
  # Observations whose target sets below this altitude are dropped from tonight's plan.
  min_altitude_deg: 28
  max_airmass: 2.1
  lookahead_minutes: 45
  replan_every_seconds: 240
  max_queue_length: 1800

telescopes:
  - id: t1-kestrel
    aperture_m: 1.0
    slew_deg_per_s: 3.5
  - id: t2-osprey
    aperture_m: 0.6
    slew_deg_per_s: 6.0
  - id: t3-harrier
    aperture_m: 0.4
    slew_deg_per_s: 8.0

moon:
  min_separation_deg: 35
  bright_time_illumination: 0.65
""",
    ),
    "min_altitude_deg: 28",
    "What minimum altitude does sched/config/scheduler.yaml require before an observation is queued?",
    "How low in the sky can a target be before the planner throws it out of the night's list?",
    "lowest elevation allowed for targets",
)

_plant(
    read_scene(
        "dome/src/shutter.rs",
        """\
//! Shutter state machine for the dome controller.
use crate::motor::{Motor, Direction};
use crate::sensors::{LimitSwitch, RainSensor};
use core::time::Duration;

/// How long the shutter motor may run before we assume it jammed.
pub const SHUTTER_TRAVEL_TIMEOUT: Duration = Duration::from_secs(94);
/// Current above which the motor is stopped at once (milliamps).
pub const SHUTTER_STALL_CURRENT_MA: u32 = 3_850;
/// Poll period of the limit switches.
pub const LIMIT_POLL: Duration = Duration::from_millis(20);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutterState {
    Closed,
    Opening,
    Open,
    Closing,
    Fault,
}

pub struct Shutter<M: Motor> {
    motor: M,
    upper: LimitSwitch,
    lower: LimitSwitch,
    rain: RainSensor,
    state: ShutterState,
}

impl<M: Motor> Shutter<M> {
    pub fn close(&mut self) {
        self.motor.run(Direction::Down);
        self.state = ShutterState::Closing;
    }
}
""",
    ),
    "Duration::from_secs(94)",
    "What is SHUTTER_TRAVEL_TIMEOUT set to in dome/src/shutter.rs?",
    "How many seconds can the dome's slit keep moving before the firmware decides it's stuck?",
    "shutter jam time limit",
)

_plant(
    read_scene(
        "pipeline/skyward_reduce/calibrate.py",
        """\
\"\"\"Bias, dark and flat calibration for raw CCD frames.\"\"\"
from __future__ import annotations

import numpy as np
from astropy.io import fits
from astropy.stats import sigma_clip

# Frames whose median counts exceed this are treated as saturated and skipped.
SATURATION_ADU = 61_500
# Flats dimmer than this are too noisy to divide by.
MIN_FLAT_MEDIAN_ADU = 12_000
# Sigma used to reject cosmic-ray hits when stacking darks.
DARK_CLIP_SIGMA = 3.7
GAIN_E_PER_ADU = 1.42
READ_NOISE_E = 6.8


def master_bias(frames: list[np.ndarray]) -> np.ndarray:
    return np.median(np.stack(frames), axis=0)


def master_dark(frames: list[np.ndarray], bias: np.ndarray) -> np.ndarray:
    stack = np.stack([f - bias for f in frames])
    clipped = sigma_clip(stack, sigma=DARK_CLIP_SIGMA, axis=0)
    return np.ma.median(clipped, axis=0).filled(0.0)


def apply(raw: np.ndarray, bias: np.ndarray, dark: np.ndarray, flat: np.ndarray) -> np.ndarray:
    return (raw - bias - dark) / (flat / np.median(flat))
""",
    ),
    "DARK_CLIP_SIGMA = 3.7",
    "What sigma does calibrate.py use to clip cosmic rays when stacking darks?",
    "When we combine the dark exposures, how aggressive is the outlier rejection for particle hits?",
    "cosmic ray rejection threshold",
)

_plant(
    read_scene(
        "ops/systemd/skyward-weatherd.service",
        """\
[Unit]
Description=Skyward weather station reader (Davis VP2 over serial)
After=network-online.target nats-server.service
Wants=network-online.target
Requires=nats-server.service

[Service]
Type=notify
User=skyward
Group=dialout
ExecStart=/opt/skyward/bin/weatherd --device /dev/ttyUSB-davis --publish weather.site
Restart=on-failure
RestartSec=17
WatchdogSec=90
MemoryMax=256M
CPUQuota=40%
Environment=WEATHERD_SAMPLE_SECONDS=10
Environment=WEATHERD_WIND_CLOSE_KMH=55
ProtectSystem=strict
ReadWritePaths=/var/lib/skyward/weather
NoNewPrivileges=true

[Install]
WantedBy=multi-user.target
""",
    ),
    "WEATHERD_WIND_CLOSE_KMH=55",
    "What wind speed does the skyward-weatherd.service unit set for closing?",
    "At what gust strength does the weather daemon tell the observatory to shut up for the night?",
    "wind limit for closing",
)

_plant(
    read_scene(
        "sched/internal/queue/priority.go",
        """\
package queue

import (
	"math"
	"time"
)

// Weights of the priority score; tuned on the 2025 semester's logs.
const (
	weightScience   = 0.55
	weightAirmass   = 0.20
	weightDeadline  = 0.15
	weightFairness  = 0.10
	// A programme that has used more than its share of the night loses this much per hour over.
	fairnessPenaltyPerHour = 0.083
	// Targets of opportunity (gamma-ray bursts, supernovae) jump the queue by this much.
	tooBoost = 4.25
)

type Observation struct {
	Programme string
	Science   float64
	Airmass   float64
	Deadline  time.Time
	IsToO     bool
}

func Score(o Observation, now time.Time, usedHours float64) float64 {
	s := weightScience*o.Science + weightAirmass*(1/o.Airmass)
	s += weightDeadline * math.Exp(-o.Deadline.Sub(now).Hours()/24)
	s -= fairnessPenaltyPerHour * usedHours
	if o.IsToO {
		s += tooBoost
	}
	return s
}
""",
    ),
    "tooBoost = 4.25",
    "In sched/internal/queue/priority.go, what is the boost for targets of opportunity?",
    "How much extra priority does a sudden transient like a gamma-ray burst get over normal requests?",
    "urgent transient bump",
)

_plant(
    read_scene(
        "ops/ansible/group_vars/mountain.yml",
        """\
# Hosts at the summit: the three telescope controllers, the dome PC and the storage node.
site_name: cerro-skyward
timezone: America/Santiago
ntp_servers:
  - ntp.shoa.cl
  - 0.cl.pool.ntp.org
gps_pps_device: /dev/pps0

skyward_user: skyward
skyward_release: "2.14.3"

nats_cluster_name: summit
nats_port: 4222
nats_monitor_port: 8222

timescale_host: store-01.summit.lan
timescale_retention_days: 400
timescale_chunk_interval: "7 days"

# Raw frames stay on the summit until the nightly rsync to the campus mirror.
raw_frames_path: /data/raw
rsync_target: campus-mirror.skyward.lan:/archive/raw
rsync_bandwidth_kbps: 18000
rsync_window: "09:00-17:00"

ups_shutdown_battery_percent: 30
""",
    ),
    "rsync_bandwidth_kbps: 18000",
    "What rsync bandwidth limit is set in ops/ansible/group_vars/mountain.yml?",
    "How fast are we allowed to push raw images down the hill to the campus copy each day?",
    "transfer speed cap for frames",
)

_plant(
    read_scene(
        "pipeline/skyward_reduce/astrometry.py",
        """\
\"\"\"Plate solving: fit a WCS to each reduced frame against Gaia DR3.\"\"\"
from __future__ import annotations

import logging

from astropy.coordinates import SkyCoord
from astropy.wcs import WCS

log = logging.getLogger(__name__)

CATALOG = "gaia_dr3"
# Stars fainter than this are ignored when matching: too many false pairs.
MATCH_MAG_LIMIT = 17.5
# A solution whose residuals exceed this (arcseconds) is rejected and the frame flagged.
MAX_RMS_ARCSEC = 0.42
MIN_MATCHED_STARS = 14
SEARCH_RADIUS_DEG = 1.5


def solve(frame, hint: SkyCoord) -> WCS | None:
    stars = frame.detect(threshold=5.0)
    if len(stars) < MIN_MATCHED_STARS:
        log.warning("only %d stars detected, skipping", len(stars))
        return None
    wcs, rms = frame.fit(stars, hint, catalog=CATALOG, radius=SEARCH_RADIUS_DEG)
    if rms > MAX_RMS_ARCSEC:
        log.warning("rms %.2f arcsec over limit", rms)
        return None
    return wcs
""",
    ),
    "MAX_RMS_ARCSEC = 0.42",
    "What is MAX_RMS_ARCSEC in the astrometry module?",
    "How precise must the fit of the sky coordinates be before we throw the image's solution away?",
    "plate solve error tolerance",
)

_plant(
    read_scene(
        "web/src/stores/nightStore.ts",
        """\
import { defineStore } from 'pinia'
import { api } from '@/lib/api'

// How often the night dashboard polls the scheduler for the live queue.
const QUEUE_REFRESH_MS = 12_500
// Weather tiles go stale faster: the station publishes every 10 s.
const WEATHER_REFRESH_MS = 10_000
const MAX_LOG_LINES = 600

export const useNightStore = defineStore('night', {
  state: () => ({
    queue: [] as Array<{ id: string; target: string; telescope: string }>,
    weather: null as null | { wind: number; humidity: number; cloud: number },
    log: [] as string[],
    timer: 0,
  }),
  actions: {
    start() {
      this.refresh()
      this.timer = window.setInterval(() => this.refresh(), QUEUE_REFRESH_MS)
    },
    async refresh() {
      this.queue = await api.get('/v1/queue/live')
    },
    stop() {
      window.clearInterval(this.timer)
    },
  },
})
""",
    ),
    "QUEUE_REFRESH_MS = 12_500",
    "What is QUEUE_REFRESH_MS in web/src/stores/nightStore.ts?",
    "How often does the browser page ask the backend for the current list of planned exposures?",
    "dashboard polling interval",
)

# --- shell commands ------------------------------------------------------------------------------

_plant(
    bash_scene(
        "go test ./internal/... 2>&1 | tail -30",
        """\
ok  	github.com/skyward/sched/internal/config	0.041s
ok  	github.com/skyward/sched/internal/ephem	1.208s
--- FAIL: TestMoonAvoidance (0.03s)
    moon_test.go:58: target "NGC 2264" at separation 31.2 deg scheduled during bright time
    moon_test.go:59: want separation >= 35.0 deg
--- FAIL: TestReplanKeepsRunningExposure (0.12s)
    replan_test.go:102: exposure obs-20261130-0457 was preempted mid-integration
FAIL
FAIL	github.com/skyward/sched/internal/queue	0.384s
ok  	github.com/skyward/sched/internal/nats	0.207s
ok  	github.com/skyward/sched/internal/telescope	0.095s
ok  	github.com/skyward/sched/internal/weather	0.066s
?   	github.com/skyward/sched/internal/version	[no test files]
ok  	github.com/skyward/sched/internal/api	0.512s
ok  	github.com/skyward/sched/internal/store	0.733s
ok  	github.com/skyward/sched/internal/metrics	0.019s
ok  	github.com/skyward/sched/internal/auth	0.058s
ok  	github.com/skyward/sched/internal/plan	0.881s
ok  	github.com/skyward/sched/internal/horizon	0.027s
ok  	github.com/skyward/sched/internal/focus	0.044s
FAIL
""",
        1,
    ),
    "obs-20261130-0457",
    "Which exposure id did TestReplanKeepsRunningExposure report as preempted?",
    "Which observation got interrupted halfway through when the planner recomputed, in the failing Go test?",
    "exposure cut short by replanning",
)

_plant(
    bash_scene(
        "cargo test --release -p dome-fw 2>&1 | tail -25",
        """\
   Compiling dome-fw v0.9.2 (/home/skyward/src/dome)
    Finished release [optimized] target(s) in 38.61s
     Running unittests src/lib.rs (target/release/deps/dome_fw-4be1c0a7d2e9f315)

running 19 tests
test motor::tests::ramps_up_linearly ... ok
test motor::tests::stops_on_overcurrent ... ok
test rotation::tests::wraps_at_360 ... ok
test rotation::tests::shortest_path_crosses_north ... ok
test rotation::tests::homing_finds_index_mark ... ok
test sensors::tests::rain_debounce ... ok
test sensors::tests::limit_switch_bounce ... ok
test shutter::tests::opens_when_dry ... ok
test shutter::tests::closes_on_rain ... ok
test shutter::tests::fault_after_timeout ... FAILED
test shutter::tests::ignores_rain_when_closed ... ok
test watchdog::tests::reboots_after_missed_kicks ... ok

failures:

---- shutter::tests::fault_after_timeout stdout ----
thread 'shutter::tests::fault_after_timeout' panicked at src/shutter.rs:211:9:
assertion `left == right` failed: shutter should be in Fault after travel timeout
  left: Closing
 right: Fault

failures:
    shutter::tests::fault_after_timeout

test result: FAILED. 18 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.04s
""",
        101,
    ),
    "src/shutter.rs:211:9",
    "Where did shutter::tests::fault_after_timeout panic in the dome-fw test run?",
    "At which line of the firmware source did the test that expects the slit to report a jam blow up?",
    "line where dome test crashed",
)

_plant(
    bash_scene(
        'psql -h store-01.summit.lan -U skyward -c "SELECT night, telescope, open_hours, lost_weather_hours '
        'FROM night_summary ORDER BY night DESC LIMIT 20"',
        """\
   night    | telescope  | open_hours | lost_weather_hours
------------+------------+------------+--------------------
 2026-12-03 | t1-kestrel |       8.91 |               0.00
 2026-12-03 | t2-osprey  |       8.74 |               0.00
 2026-12-03 | t3-harrier |       8.88 |               0.00
 2026-12-02 | t1-kestrel |       2.16 |               6.63
 2026-12-02 | t2-osprey  |       2.09 |               6.71
 2026-12-02 | t3-harrier |       2.20 |               6.58
 2026-12-01 | t1-kestrel |       0.00 |               9.12
 2026-12-01 | t2-osprey  |       0.00 |               9.12
 2026-12-01 | t3-harrier |       0.00 |               9.12
 2026-11-30 | t1-kestrel |       7.45 |               1.39
 2026-11-30 | t2-osprey  |       6.97 |               1.87
 2026-11-30 | t3-harrier |       7.51 |               1.33
 2026-11-29 | t1-kestrel |       8.80 |               0.00
 2026-11-29 | t2-osprey  |       8.79 |               0.00
 2026-11-29 | t3-harrier |       8.83 |               0.00
 2026-11-28 | t1-kestrel |       5.02 |               3.77
 2026-11-28 | t2-osprey  |       4.96 |               3.81
 2026-11-28 | t3-harrier |       5.05 |               3.74
 2026-11-27 | t1-kestrel |       8.69 |               0.00
 2026-11-27 | t2-osprey  |       8.71 |               0.00
(20 rows)
""",
    ),
    "9.12",
    "In the night_summary query, how many lost_weather_hours did 2026-12-01 have?",
    "On the first of December, how much of the night did we lose to clouds and rain?",
    "hours lost on Dec 1",
)

_plant(
    bash_scene(
        "journalctl -u skyward-domed --since '2026-12-02 22:00' --no-pager | tail -24",
        """\
Dec 02 22:00:04 dome-pc domed[1311]: shutter Open, azimuth 184.2, tracking t1-kestrel
Dec 02 22:14:37 dome-pc domed[1311]: rotation step to azimuth 191.0
Dec 02 22:29:51 dome-pc domed[1311]: rotation step to azimuth 198.4
Dec 02 22:41:12 dome-pc domed[1311]: weather: humidity 71% wind 22 km/h
Dec 02 22:58:40 dome-pc domed[1311]: weather: humidity 79% wind 25 km/h
Dec 02 23:06:03 dome-pc domed[1311]: weather: humidity 86% wind 31 km/h
Dec 02 23:11:26 dome-pc domed[1311]: weather: humidity 91% wind 34 km/h
Dec 02 23:11:26 dome-pc domed[1311]: CLOSE requested by weatherd: humidity 91% over limit 90%
Dec 02 23:11:27 dome-pc domed[1311]: shutter Closing
Dec 02 23:12:59 dome-pc domed[1311]: shutter Closed after 92.4 s
Dec 02 23:13:00 dome-pc domed[1311]: scheduler notified: site closed (reason=humidity)
Dec 02 23:45:10 dome-pc domed[1311]: weather: humidity 93% wind 29 km/h
Dec 03 00:15:22 dome-pc domed[1311]: weather: humidity 88% wind 18 km/h
Dec 03 00:45:41 dome-pc domed[1311]: weather: humidity 84% wind 15 km/h
Dec 03 01:15:02 dome-pc domed[1311]: weather: humidity 80% wind 12 km/h
Dec 03 01:30:00 dome-pc domed[1311]: reopen hold: humidity must stay under 85% for 30 min
Dec 03 02:00:00 dome-pc domed[1311]: weather: humidity 77% wind 10 km/h
Dec 03 02:00:01 dome-pc domed[1311]: OPEN requested by scheduler
Dec 03 02:00:02 dome-pc domed[1311]: shutter Opening
Dec 03 02:01:31 dome-pc domed[1311]: shutter Open after 89.1 s
Dec 03 02:01:32 dome-pc domed[1311]: scheduler notified: site open
""",
    ),
    "Dec 02 23:11:26",
    "When did the domed journal log the CLOSE request from weatherd on December 2?",
    "What time did the roof shut because the air got too damp that night?",
    "when did it close for moisture",
)

_plant(
    bash_scene(
        "python -m skyward_reduce.cli reduce --night 2026-11-30 --telescope t2-osprey",
        """\
[reduce] night 2026-11-30, telescope t2-osprey, 214 raw frames
[reduce] master bias from 21 frames
[reduce] master dark from 15 frames (exptime 120 s)
[reduce] master flat V from 9 frames, median 24810 ADU
[reduce] master flat R from 9 frames, median 27302 ADU
[reduce] master flat B from 3 frames, median 8114 ADU
[reduce] calibrating 214 science frames with 4 Dask workers
[reduce] frame 37/214 t2_20261130_0037.fits: saturated (median 62011 ADU), skipped
[reduce] frame 88/214 t2_20261130_0088.fits: saturated (median 61944 ADU), skipped
[reduce] 212 frames calibrated
[reduce] plate solving 212 frames against gaia_dr3
[reduce] frame t2_20261130_0102.fits: only 9 stars detected, skipping
[reduce] frame t2_20261130_0141.fits: rms 0.57 arcsec over limit
[reduce] 210 frames solved
Traceback (most recent call last):
  File "/opt/skyward/pipeline/skyward_reduce/cli.py", line 88, in reduce
    stack = photometry.stack(solved, band="B")
  File "/opt/skyward/pipeline/skyward_reduce/photometry.py", line 143, in stack
    flat = masters.flat(band)
  File "/opt/skyward/pipeline/skyward_reduce/masters.py", line 61, in flat
    raise CalibrationError(f"flat {band}: median {median} ADU under {MIN_FLAT_MEDIAN_ADU}")
skyward_reduce.masters.CalibrationError: flat B: median 8114 ADU under 12000
""",
        1,
    ),
    "flat B: median 8114 ADU under 12000",
    "What CalibrationError did the reduce command for 2026-11-30 on t2-osprey end with?",
    "Why did processing the November 30 images from the small scope crash at the end?",
    "why did the reduction fail",
)

_plant(
    bash_scene(
        "nats stream info WEATHER --server nats://store-01.summit.lan:4222",
        """\
Information for Stream WEATHER created 2026-06-14 03:12:55

             Subjects: weather.>
             Replicas: 1
              Storage: File

Options:

            Retention: Limits
     Acknowledgements: true
       Discard Policy: Old
     Duplicate Window: 2m0s
           Direct Get: true
    Allows Msg Delete: true
         Allows Purge: true
       Allows Rollups: false

Limits:

     Maximum Messages: unlimited
  Maximum Per Subject: 250,000
        Maximum Bytes: 8.0 GiB
          Maximum Age: 21d0h0m0s
 Maximum Message Size: 64 KiB
    Maximum Consumers: unlimited

State:

             Messages: 1,702,334
                Bytes: 3.1 GiB
""",
    ),
    "21d0h0m0s",
    "What Maximum Age does the nats WEATHER stream have?",
    "How long do we keep the weather station's readings in the message bus before they're thrown away?",
    "how long weather messages are kept",
)

_plant(
    bash_scene(
        "ansible-playbook -i inventory/summit.ini site.yml --limit dome-pc --check",
        """\
PLAY [dome controllers] ********************************************************

TASK [Gathering Facts] *********************************************************
ok: [dome-pc]

TASK [skyward_user : create service account] ***********************************
ok: [dome-pc]

TASK [firmware : copy dome-fw image] *******************************************
changed: [dome-pc]

TASK [firmware : flash controller over usb] ************************************
fatal: [dome-pc]: FAILED! => {"changed": false, "msg": "dfu-util: No DFU capable USB device available (is the controller in bootloader mode? hold BOOT0 while resetting)"}

PLAY RECAP *********************************************************************
dome-pc                    : ok=3    changed=1    unreachable=0    failed=1    skipped=0    rescued=0    ignored=0

[WARNING]: Could not match supplied host pattern, ignoring: dome-spare
Re-run with --limit @/home/skyward/ops/ansible/site.retry
Flash attempts on this host this week: 3
Last successful flash: 2026-11-18 (dome-fw 0.9.1)
Controller serial: SKW-DC-0042
USB hub port: 1-1.3
Bootloader: STM32 DFU 2.2
Inventory groups: mountain, dome, controllers
Tags skipped: none
""",
        2,
    ),
    "No DFU capable USB device available",
    "What did dfu-util say when the ansible playbook tried to flash dome-pc?",
    "Why couldn't we load the new firmware onto the roof controller during the dry run?",
    "firmware upload error",
)

_plant(
    bash_scene(
        "df -h /data /var/lib/timescale /home",
        """\
Filesystem                 Size  Used Avail Use% Mounted on
/dev/mapper/vg0-raw         44T   39T  4.6T  90% /data
/dev/mapper/vg0-timescale  3.6T  1.2T  2.3T  35% /var/lib/timescale
/dev/nvme0n1p3             920G  212G  661G  25% /home

Largest directories under /data/raw (du -sh, top 16):
2.9T	/data/raw/2026-11
2.7T	/data/raw/2026-10
2.6T	/data/raw/2026-09
2.4T	/data/raw/2026-08
2.2T	/data/raw/2026-07
2.1T	/data/raw/2026-06
1.9T	/data/raw/2026-05
1.8T	/data/raw/2026-04
1.7T	/data/raw/2026-03
1.6T	/data/raw/2026-02
1.5T	/data/raw/2026-01
1.4T	/data/raw/2025-12
1.3T	/data/raw/2025-11
1.2T	/data/raw/2025-10
0.9T	/data/raw/2025-09
0.8T	/data/raw/2025-08
Oldest month not yet mirrored: 2026-10
""",
    ),
    "4.6T",
    "How much space is available on /data according to df -h?",
    "How much room is left on the disk where the raw telescope images pile up?",
    "free space for raw frames",
)

_plant(
    bash_scene(
        "git log --oneline -20 -- sched/internal/plan",
        """\
f3a9c10 plan: never preempt an exposure that is already integrating
9b2e477 plan: add twilight flats slot before astronomical dusk
61d0c4e plan: honour per-programme max hours per night
c7e51aa plan: skip targets within 35 deg of the moon in bright time
0a4d932 plan: cache ephemerides per night (12x faster replans)
e88f2b1 plan: replan when a telescope reports a fault
2d7f604 plan: prefer the telescope with the shortest slew
a91c3de plan: spread standard stars over the night
5c0b8e7 plan: weight deadlines by hours left, not days
ee41a25 plan: lookahead from 30 to 45 minutes
7f29d16 plan: drop targets under min altitude at exposure end, not start
b30c9a4 plan: first cut of the greedy planner
4de1f77 plan: skeleton and interfaces
19c8a02 plan: tests for the horizon mask
83b5e6d plan: horizon mask per telescope from the survey
d2c6f0b plan: read programme allocations from TimescaleDB
6e7a1c4 plan: metrics for queue length and idle time
0b9f3d5 plan: refuse to plan when the weather feed is stale
a4e8c27 plan: log why each target was skipped
c1f5d39 plan: initial commit of the planning package
""",
    ),
    "2d7f604",
    "Which commit in sched/internal/plan made the planner prefer the telescope with the shortest slew?",
    "Which change made scheduling pick whichever instrument can swing to the target quickest?",
    "commit for quickest telescope choice",
)

_plant(
    bash_scene(
        "curl -s http://sched.summit.lan:7380/v1/health | jq .",
        """\
{
  "status": "degraded",
  "version": "2.14.3",
  "uptime_seconds": 412877,
  "checks": {
    "nats": { "ok": true, "latency_ms": 1.8 },
    "timescale": { "ok": true, "latency_ms": 6.2 },
    "ephemeris": { "ok": true, "age_hours": 3.1 },
    "weather_feed": {
      "ok": false,
      "last_message_age_seconds": 734,
      "max_age_seconds": 120,
      "detail": "no weather.site message for 12m14s"
    },
    "telescopes": {
      "t1-kestrel": "tracking",
      "t2-osprey": "idle",
      "t3-harrier": "fault: focuser not responding"
    }
  },
  "queue_length": 312,
  "plan_generated_at": "2026-12-04T03:41:09Z"
}
""",
    ),
    "fault: focuser not responding",
    "What state did the /v1/health endpoint report for t3-harrier?",
    "What was wrong with the smallest telescope when we checked the scheduler's status page?",
    "problem with third scope",
)

# --- greps ---------------------------------------------------------------------------------------

_plant(
    grep_scene(
        "retry|Retry|backoff",
        "sched/internal",
        """\
sched/internal/nats/client.go:22:	reconnectWait      = 2 * time.Second
sched/internal/nats/client.go:23:	maxReconnects      = 120
sched/internal/nats/client.go:41:	nats.ReconnectWait(reconnectWait),
sched/internal/nats/client.go:42:	nats.MaxReconnects(maxReconnects),
sched/internal/telescope/driver.go:31:	slewRetryAttempts  = 4
sched/internal/telescope/driver.go:32:	slewRetryBackoff   = 1500 * time.Millisecond
sched/internal/telescope/driver.go:77:	for attempt := 1; attempt <= slewRetryAttempts; attempt++ {
sched/internal/telescope/driver.go:84:		time.Sleep(slewRetryBackoff * time.Duration(attempt))
sched/internal/store/timescale.go:18:	queryRetries = 3
sched/internal/store/timescale.go:19:	retryDelay   = 250 * time.Millisecond
sched/internal/store/timescale.go:66:	for i := 0; i < queryRetries; i++ {
sched/internal/store/timescale.go:71:		time.Sleep(retryDelay << i)
sched/internal/weather/feed.go:28:	resubscribeBackoff = 5 * time.Second
sched/internal/weather/feed.go:53:		time.Sleep(resubscribeBackoff)
sched/internal/api/server.go:39:	// Retry-After sent with 503 while the plan is being rebuilt
sched/internal/api/server.go:88:	w.Header().Set("Retry-After", "15")
sched/internal/focus/autofocus.go:26:	focusRetryLimit = 2
sched/internal/focus/autofocus.go:58:	if tries > focusRetryLimit {
sched/internal/auth/tokens.go:44:	// no retry: a rejected token is final
sched/internal/ephem/jpl.go:35:	downloadRetries = 6
sched/internal/ephem/jpl.go:36:	downloadBackoff = 30 * time.Second
""",
    ),
    "slewRetryAttempts  = 4",
    "How many slew retry attempts does sched/internal/telescope/driver.go allow?",
    "If a telescope fails to move to its target, how many times will the scheduler try again?",
    "tries to point the mount",
)

_plant(
    grep_scene(
        "TODO|FIXME",
        "pipeline/skyward_reduce",
        """\
pipeline/skyward_reduce/calibrate.py:31:    # TODO: per-amplifier bias for the t1 camera (two readout ports)
pipeline/skyward_reduce/astrometry.py:12:# FIXME(SKY-318): Gaia proper motions not applied, 2016 epoch positions used
pipeline/skyward_reduce/photometry.py:58:    # TODO(SKY-344): colour terms per telescope, not one set for all three
pipeline/skyward_reduce/photometry.py:121:    # FIXME(SKY-351): aperture radius fixed at 6 px even in bad seeing
pipeline/skyward_reduce/masters.py:40:    # TODO: reuse last night's flats when today's are too few
pipeline/skyward_reduce/masters.py:77:    # FIXME(SKY-327): darks scaled linearly by exposure time, hot pixels are not linear
pipeline/skyward_reduce/cli.py:19:# TODO: --resume to skip frames already written
pipeline/skyward_reduce/cli.py:102:    # FIXME(SKY-362): Dask workers leak file handles on FITS with 4 extensions
pipeline/skyward_reduce/export.py:27:    # TODO(SKY-290): write the MEF layout the archive expects
pipeline/skyward_reduce/export.py:64:    # TODO: checksum each file before rsync
pipeline/skyward_reduce/catalog.py:15:# TODO(SKY-305): cache Gaia cone searches on disk
pipeline/skyward_reduce/catalog.py:88:    # FIXME: RA wrap at 0/360 deg in the cone query
pipeline/skyward_reduce/quality.py:23:    # TODO: FWHM from a PSF fit, not second moments
pipeline/skyward_reduce/quality.py:47:    # FIXME(SKY-339): ellipticity over 1 for streaked frames
pipeline/skyward_reduce/weather.py:9:# TODO: join humidity from TimescaleDB to each frame header
pipeline/skyward_reduce/tests/test_masters.py:33:    # TODO(SKY-327): test hot pixel scaling once fixed
pipeline/skyward_reduce/tests/test_astrometry.py:41:    # FIXME(SKY-318): tolerance widened until proper motions land
pipeline/skyward_reduce/tests/test_photometry.py:18:    # TODO(SKY-351): seeing-dependent aperture case
pipeline/skyward_reduce/tests/test_cli.py:12:    # TODO: exercise --night with no frames
pipeline/skyward_reduce/tests/test_quality.py:29:    # TODO: streak detection fixture
""",
    ),
    "SKY-362",
    "Which ticket does the FIXME about Dask workers leaking file handles reference?",
    "What's the issue number for the pipeline bug where parallel workers don't close opened image files?",
    "ticket for worker handle leak",
)

_plant(
    grep_scene(
        "bind|listen|Listen",
        "ops",
        """\
ops/nats/nats-server.conf:3:listen: 0.0.0.0:4222
ops/nats/nats-server.conf:4:http: 0.0.0.0:8222
ops/nats/nats-server.conf:12:  listen: 0.0.0.0:6222
ops/nginx/skyward.conf:5:    listen 443 ssl http2;
ops/nginx/skyward.conf:6:    listen [::]:443 ssl http2;
ops/nginx/skyward.conf:31:    listen 80;
ops/nginx/skyward.conf:44:        proxy_pass http://127.0.0.1:7380;
ops/timescale/postgresql.conf:59:listen_addresses = '10.20.0.15'
ops/timescale/postgresql.conf:63:port = 5433
ops/grafana/grafana.ini:18:http_addr = 127.0.0.1
ops/grafana/grafana.ini:19:http_port = 3009
ops/prometheus/prometheus.yml:9:    - targets: ['sched.summit.lan:7381']
ops/prometheus/prometheus.yml:14:    - targets: ['dome-pc.summit.lan:9101']
ops/prometheus/prometheus.yml:19:    - targets: ['store-01.summit.lan:9187']
ops/systemd/skyward-sched.service:11:ExecStart=/opt/skyward/bin/sched --listen 0.0.0.0:7311
ops/systemd/skyward-domed.service:10:ExecStart=/opt/skyward/bin/domed --listen 127.0.0.1:7450
ops/systemd/skyward-weatherd.service:9:ExecStart=/opt/skyward/bin/weatherd --device /dev/ttyUSB-davis
ops/ansible/roles/firewall/tasks/main.yml:22:    port: 4222
ops/ansible/roles/firewall/tasks/main.yml:27:    port: 5433
ops/ansible/roles/firewall/tasks/main.yml:32:    port: 443
ops/ansible/roles/firewall/tasks/main.yml:37:    port: 7311
""",
    ),
    "port = 5433",
    "What port is set in ops/timescale/postgresql.conf?",
    "Which port does the time-series database accept client connections on up at the summit?",
    "database server port",
)

_plant(
    grep_scene(
        "humidity",
        "dome/src",
        """\
dome/src/config.rs:14:pub const HUMIDITY_CLOSE_PERCENT: u8 = 90;
dome/src/config.rs:15:pub const HUMIDITY_REOPEN_PERCENT: u8 = 85;
dome/src/config.rs:16:pub const HUMIDITY_REOPEN_HOLD_MIN: u16 = 30;
dome/src/config.rs:17:pub const DEW_POINT_MARGIN_C: f32 = 2.5;
dome/src/sensors.rs:48:    pub fn humidity(&self) -> u8 {
dome/src/sensors.rs:52:        let raw = self.i2c.read_word(SHT35_ADDR, CMD_HUMIDITY);
dome/src/sensors.rs:57:        // SHT35: RH = 100 * raw / 65535
dome/src/sensors.rs:61:        (100.0 * raw as f32 / 65535.0) as u8
dome/src/safety.rs:22:    if w.humidity >= HUMIDITY_CLOSE_PERCENT {
dome/src/safety.rs:23:        return Some(CloseReason::Humidity);
dome/src/safety.rs:31:    if w.temperature - w.dew_point < DEW_POINT_MARGIN_C {
dome/src/safety.rs:40:    if w.humidity < HUMIDITY_REOPEN_PERCENT && held >= HUMIDITY_REOPEN_HOLD_MIN {
dome/src/safety.rs:67:        // humidity alone never reopens: the scheduler asks
dome/src/main.rs:88:    log::info!("weather: humidity {}% wind {} km/h", w.humidity, w.wind_kmh);
dome/src/main.rs:93:        log::warn!("CLOSE: humidity {}% over limit", w.humidity);
dome/src/tests/safety_test.rs:12:    // humidity 91 closes
dome/src/tests/safety_test.rs:19:    // humidity 86 does not reopen
dome/src/tests/safety_test.rs:27:    // humidity 80 for 30 min reopens
dome/src/tests/safety_test.rs:35:    // dew margin under 2.5 C closes even at low humidity
dome/src/tests/safety_test.rs:44:    // humidity sensor absent: treated as 100
""",
    ),
    "DEW_POINT_MARGIN_C: f32 = 2.5",
    "What is DEW_POINT_MARGIN_C in dome/src/config.rs?",
    "How close can the air temperature get to condensation before the dome closes on its own?",
    "condensation safety margin",
)

_plant(
    grep_scene(
        "max_hours|maxHours",
        "sched",
        """\
sched/internal/plan/allocation.go:17:	// maxHours per programme per night, from the semester's time allocation
sched/internal/plan/allocation.go:34:	if used >= a.MaxHours {
sched/internal/plan/allocation_test.go:21:		MaxHours: 2.5,
sched/internal/plan/allocation_test.go:48:		MaxHours: 0,
sched/config/programmes.yaml:4:  - id: P2026B-011   # exoplanet transits
sched/config/programmes.yaml:5:    max_hours: 3.5
sched/config/programmes.yaml:8:  - id: P2026B-017   # variable star survey
sched/config/programmes.yaml:9:    max_hours: 2.0
sched/config/programmes.yaml:12:  - id: P2026B-023   # near-earth asteroid follow-up
sched/config/programmes.yaml:13:    max_hours: 4.75
sched/config/programmes.yaml:16:  - id: P2026B-031   # student projects
sched/config/programmes.yaml:17:    max_hours: 1.0
sched/config/programmes.yaml:20:  - id: P2026B-038   # supernova light curves
sched/config/programmes.yaml:21:    max_hours: 2.25
sched/config/programmes.yaml:24:  - id: P2026B-044   # galaxy cluster imaging
sched/config/programmes.yaml:25:    max_hours: 1.5
sched/internal/api/programmes.go:52:	MaxHours  float64 `json:"max_hours"`
sched/internal/api/programmes.go:71:	if p.MaxHours < 0 {
sched/internal/api/programmes.go:72:		return errBadMaxHours
sched/web_test/programmes_test.go:9:	// max_hours over 12 is rejected
""",
    ),
    "max_hours: 4.75",
    "What max_hours does programmes.yaml give P2026B-023?",
    "How much telescope time per night is the near-earth asteroid follow-up allowed?",
    "nightly quota for asteroid programme",
)


FACTS: list[PlantedFact] = _FACTS


# --- distractors ---------------------------------------------------------------------------------
# Look-alike outputs of the same project: other configs and units, passing runs, other greps and
# logs. Each template draws its values from `rng`; `_acceptable` drops any scene that would repeat
# a fact's answer, path or command.

_TELESCOPES = ("t1-kestrel", "t2-osprey", "t3-harrier")
_SERVICES = ("skyward-sched", "skyward-domed", "skyward-reduce", "skyward-archiver", "skyward-focusd")
_GO_PACKAGES = (
    "config", "ephem", "queue", "nats", "telescope", "weather", "api", "store", "metrics", "auth",
    "plan", "horizon", "focus", "calib", "guider", "camera", "filters", "alerts",
)  # fmt: skip


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _d_go_test_pass(rng: random.Random) -> Scene:
    packages = rng.sample(_GO_PACKAGES, rng.randint(15, 18))
    lines = [f"ok  \tgithub.com/skyward/sched/internal/{p}\t{rng.uniform(0.01, 2.0):.3f}s" for p in packages]
    lines += [
        f"ok  \tgithub.com/skyward/sched/cmd/{c}\t{rng.uniform(0.01, 0.5):.3f}s"
        for c in ("sched", "schedctl")
    ]
    lines += ["PASS"] * 3
    return bash_scene(
        f"go test ./... -count=1 -run {rng.choice(['.', 'Test', 'Plan', 'Queue'])}", "\n".join(lines)
    )


def _d_service_unit(rng: random.Random) -> Scene:
    name = rng.choice(_SERVICES)
    restart = rng.randint(2, 30)
    lines = [
        "[Unit]",
        f"Description=Skyward {name.split('-')[1]} service",
        "After=network-online.target nats-server.service",
        "Wants=network-online.target",
        "",
        "[Service]",
        f"Type={rng.choice(['simple', 'notify', 'exec'])}",
        "User=skyward",
        f"ExecStart=/opt/skyward/bin/{name.split('-')[1]} --config /etc/skyward/{name}.yaml",
        "Restart=on-failure",
        f"RestartSec={restart}",
        f"WatchdogSec={rng.choice([30, 60, 120, 180])}",
        f"MemoryMax={rng.choice([128, 512, 1024, 2048])}M",
        f"CPUQuota={rng.choice([20, 50, 80, 150])}%",
        f"Environment={name.split('-')[1].upper()}_LOG_LEVEL={rng.choice(['info', 'debug', 'warn'])}",
        f"Environment={name.split('-')[1].upper()}_WORKERS={rng.randint(1, 16)}",
        "ProtectSystem=strict",
        f"ReadWritePaths=/var/lib/skyward/{name.split('-')[1]}",
        "NoNewPrivileges=true",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
    ]
    host = rng.choice(["summit", "campus", "spare"])
    return read_scene(f"ops/systemd/{host}/{name}-{rng.randint(1, 999)}.service", "\n".join(lines))


def _d_journal(rng: random.Random) -> Scene:
    service = rng.choice(_SERVICES)
    day = rng.randint(1, 28)
    lines = []
    for _ in range(rng.randint(20, 30)):
        clock = f"{rng.randint(18, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
        event = rng.choice(
            [
                f"weather: humidity {rng.randint(20, 70)}% wind {rng.randint(0, 40)} km/h",
                f"rotation step to azimuth {rng.uniform(0, 360):.1f}",
                f"exposure obs-2026{rng.randint(1, 11):02d}{day:02d}-{rng.randint(0, 9999):04d} started on "
                f"{rng.choice(_TELESCOPES)}",
                f"focus sweep done, best position {rng.randint(10000, 30000)}",
                f"plan rebuilt: {rng.randint(50, 400)} observations queued",
                f"slew to RA {rng.uniform(0, 24):.3f}h Dec {rng.uniform(-90, 30):+.2f} on {rng.choice(_TELESCOPES)}",
                f"nats: published {rng.randint(10, 900)} messages",
            ]
        )
        lines.append(
            f"Nov {day:02d} {clock} summit {service.split('-')[1]}[{rng.randint(900, 5000)}]: {event}"
        )
    return bash_scene(
        f"journalctl -u {service} --since '2026-11-{day:02d} 18:00' --no-pager | head -{len(lines)}",
        "\n".join(lines),
    )


def _d_yaml_config(rng: random.Random) -> Scene:
    name = rng.choice(["guider", "camera", "focus", "archiver", "alerts", "filters"])
    lines = [f"# Skyward {name} settings.", "service:", f"  name: skyward-{name}"]
    lines += [f"  grpc_port: {rng.randint(7000, 7999)}", f"  http_port: {rng.randint(7000, 7999)}", ""]
    lines += [f"{name}:"]
    keys = [
        "exposure_seconds", "retry_attempts", "timeout_seconds", "min_altitude_deg", "max_airmass",
        "poll_interval_ms", "max_queue_length", "refresh_seconds", "min_separation_deg", "gain",
        "binning", "temperature_c", "settle_seconds", "backlash_steps", "max_hours",
    ]  # fmt: skip
    for key in rng.sample(keys, rng.randint(10, 14)):
        lines.append(f"  {key}: {rng.choice([rng.randint(1, 900), round(rng.uniform(0.1, 60), 2)])}")
    lines += ["", "telescopes:"] + [f"  - {t}" for t in rng.sample(_TELESCOPES, 2)]
    return read_scene(
        f"{rng.choice(['sched', 'ops', 'pipeline'])}/config/{name}-{rng.randint(1, 99)}.yaml",
        "\n".join(lines),
    )


def _d_psql(rng: random.Random) -> Scene:
    lines = [
        "   night    | telescope  | frames | mean_fwhm_arcsec",
        "------------+------------+--------+------------------",
    ]
    for day in range(20, 0, -1):
        lines.append(
            f" 2026-{rng.randint(6, 10):02d}-{day:02d} | {rng.choice(_TELESCOPES):<10} | {rng.randint(0, 300):>6} |"
            f" {rng.uniform(0.8, 3.5):>16.2f}"
        )
    lines.append("(20 rows)")
    return bash_scene(
        f'psql -h store-01.summit.lan -U skyward -c "SELECT * FROM frame_quality WHERE fwhm > {rng.randint(1, 9)}"',
        "\n".join(lines),
    )


def _d_grep(rng: random.Random) -> Scene:
    folder = rng.choice(["sched/cmd", "pipeline/skyward_reduce/io", "dome/src/bin", "ops/ansible/roles"])
    pattern = rng.choice(["timeout", "limit", "interval", "port", "threshold", "max_"])
    lines = []
    for _ in range(rng.randint(20, 26)):
        file = rng.choice(["alpha", "beta", "gamma", "delta", "main", "util", "io", "core"])
        ext = {
            "sched/cmd": "go",
            "pipeline/skyward_reduce/io": "py",
            "dome/src/bin": "rs",
            "ops/ansible/roles": "yml",
        }[folder]
        value = rng.choice([rng.randint(1, 99_999), round(rng.uniform(0.1, 99), 2)])
        lines.append(
            f"{folder}/{file}_{rng.randint(1, 40)}.{ext}:{rng.randint(1, 400)}:    {pattern}_{_hex(rng, 3)} = {value}"
        )
    return grep_scene(f"{pattern}|{_hex(rng, 4)}", folder, "\n".join(lines))


def _d_git_log(rng: random.Random) -> Scene:
    area = rng.choice(["queue", "ephem", "telescope", "weather", "api", "focus", "guider"])
    verbs = ["add", "fix", "drop", "tune", "log", "test", "refactor", "speed up", "document", "rename"]
    things = [
        "the slew estimate", "airmass limits", "the focus curve", "moon distance", "queue metrics",
        "weather staleness", "programme limits", "the horizon mask", "the guider loop", "dark frames",
    ]  # fmt: skip
    lines = [f"{_hex(rng, 7)} {area}: {rng.choice(verbs)} {rng.choice(things)}" for _ in range(20)]
    return bash_scene(f"git log --oneline -20 -- sched/internal/{area}", "\n".join(lines))


def _d_cargo_pass(rng: random.Random) -> Scene:
    names = [
        "motor::tests::ramps_up_linearly", "rotation::tests::wraps_at_360", "sensors::tests::rain_debounce",
        "shutter::tests::opens_when_dry", "shutter::tests::closes_on_rain", "watchdog::tests::kicks",
        "safety::tests::humidity_closes", "safety::tests::dew_margin", "rotation::tests::homing",
        "motor::tests::soft_start", "sensors::tests::i2c_retry", "config::tests::defaults",
    ]  # fmt: skip
    picked = rng.sample(names, rng.randint(10, 12))
    lines = [
        f"   Compiling dome-fw v0.{rng.randint(5, 9)}.{rng.randint(0, 9)} (/home/skyward/src/dome)",
        f"    Finished test [unoptimized + debuginfo] target(s) in {rng.uniform(5, 60):.2f}s",
        f"     Running unittests src/lib.rs (target/debug/deps/dome_fw-{_hex(rng, 16)})",
        "",
        f"running {len(picked)} tests",
    ]
    lines += [f"test {n} ... ok" for n in picked]
    lines += [
        "",
        f"test result: ok. {len(picked)} passed; 0 failed; 0 ignored; finished in {rng.uniform(0, 1):.2f}s",
    ]
    lines += ["", "   Doc-tests dome_fw", "", "running 0 tests", ""]
    return bash_scene(
        f"cargo test -p dome-fw {rng.choice(['motor', 'rotation', 'sensors', 'safety', ''])}",
        "\n".join(lines),
    )


_TEMPLATES: tuple[Callable[[random.Random], Scene], ...] = (
    _d_go_test_pass,
    _d_service_unit,
    _d_journal,
    _d_yaml_config,
    _d_psql,
    *(_d_grep,) * 2,
    _d_git_log,
    _d_cargo_pass,
)

_ANSWERS = tuple(fact.answer for fact in FACTS)
_FACT_ARGS = frozenset(str(value) for fact in FACTS for value in fact.scene.args.values())
_FACT_NAMES = tuple(
    str(fact.scene.args["path"] if fact.scene.tool == "read_file" else fact.scene.args["command"])
    for fact in FACTS
    if fact.scene.tool in ("read_file", "bash")
)


def _acceptable(scene: Scene) -> bool:
    values = [str(value) for value in scene.args.values()]
    if any(value in _FACT_ARGS for value in values):
        return False
    if any(answer in value for answer in _ANSWERS for value in values):
        return False
    if any(answer in scene.output for answer in _ANSWERS):
        return False
    return not any(name in scene.output for name in _FACT_NAMES)


def distractors(seed: int, count: int) -> list[Scene]:
    """`count` look-alike outputs of the project holding no fact's answer, path or command."""
    return draw(seed, count, _TEMPLATES, _acceptable)
