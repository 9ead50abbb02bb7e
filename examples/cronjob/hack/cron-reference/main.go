// Command cron-reference prints robfig/cron v1.2.0's reading of cron specs, for the Rust
// port's differential test (examples/cronjob/tests/cron_differential.rs): for each case, the
// spec, an instant and what cron.ParseStandard says (its error) or the next three activations
// after the instant, chained as the controller chains them, in the local time zone (TZ).
// The cases are hand-picked ones plus random ones from a fixed seed, so a run is repeatable.
// regen.sh runs it under time zones with daylight saving time.
package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"time"

	"github.com/robfig/cron"
)

type result struct {
	Zone string   `json:"zone"`
	Spec string   `json:"spec"`
	At   string   `json:"at"`
	Next []string `json:"next,omitempty"`
	Err  string   `json:"err,omitempty"`
}

var handPicked = []string{
	"* * * * *", "*/5 * * * *", "1 * * * *", "0 0 * * *", "0 0 1 1 *", "0 12 * * 1-5",
	"30 2 * * *", "30 1 * * *", "0 2 * * *", "59 1 * * *", "0 3 * * 0", "15 2 8 3 *",
	"0 1 1 11 *", "30 1 1 11 *", "*/15 1-3 * * *", "0 */2 * * *", "0 0 29 2 *", "0 0 30 2 *",
	"0 0 31 * *", "0 0 1,15 * mon", "0 0 13 * fri", "0 0 * * sun", "0 0 * jan,jul *",
	"5-10/2 * * * *", "5/20 * * * *", "*/0 * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *",
	"* * 32 * *", "* * * 13 *", "* * * * 7", "1-2-3 * * * *", "1/2/3 * * * *", "5-3 * * * *",
	"-1 * * * *", "*/-1 * * * *", "+5 * * * *", "*/+5 * * * *", "x * * * *", "* * * foo *",
	"*-5 * * * *", "? ? ? ? ?", "1,,2 * * * *", ", * * * *", "99999999999999999999 * * * *",
	"* * * * * *", "* * * *", "", " ", "@hourly", "@daily", "@midnight", "@weekly", "@monthly",
	"@yearly", "@annually", "@every 1h", "@every 90m", "@every 1.5h", "@every 30s", "@every 500ms",
	"@every 0", "@every -1h", "@every 1d", "@every", "@every ", "@every 1h30m10s", "@every .5m",
	"@reboot", "@HOURLY", " @hourly", "TZ=UTC * * * * *", "CRON_TZ=UTC * * * * *",
	"*\t*  * *\n*", "0 0 * * MON-FRI", "0 0 * JAN-MAR *", "0 0 L * *", "0 0 * * 1#2",
	"0 0 ? * 1", "0 0 1 * ?", "7 7 7 7 *", "0 0 1 1 0", "0 2 * * 0", "30 2 8 3 0",
	"@every 1µs", "@every 2562047h47m16.854775807s", "@every 2562048h", "@every 1.h", "@every .h",
}

func randomField(r *rand.Rand, min, max int, names []string) string {
	atom := func() string {
		switch r.Intn(10) {
		case 0:
			if names != nil {
				n := names[r.Intn(len(names))]
				if r.Intn(2) == 0 {
					n = strings.ToUpper(n)
				}
				return n
			}
			return fmt.Sprint(min + r.Intn(max-min+1))
		case 1:
			return fmt.Sprint(min - 1 + r.Intn(max-min+3)) // maybe out of range
		default:
			return fmt.Sprint(min + r.Intn(max-min+1))
		}
	}
	item := func() string {
		switch r.Intn(12) {
		case 0, 1, 2:
			return "*"
		case 3:
			return "*/" + fmt.Sprint(1+r.Intn(max+1))
		case 4:
			return atom() + "-" + atom()
		case 5:
			return atom() + "-" + atom() + "/" + fmt.Sprint(r.Intn(max+2))
		case 6:
			return atom() + "/" + fmt.Sprint(1+r.Intn(max))
		case 7:
			if r.Intn(8) == 0 {
				return []string{"?", "x", "1-", "-", "*/", "1/2/3", "1-2-3", ""}[r.Intn(8)]
			}
			return atom()
		default:
			return atom()
		}
	}
	n := 1
	if r.Intn(4) == 0 {
		n = 2 + r.Intn(3)
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = item()
	}
	return strings.Join(parts, ",")
}

var months = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
var days = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

func randomSpec(r *rand.Rand) string {
	if r.Intn(20) == 0 {
		units := []string{"s", "m", "h", "ms", "us", "ns", "d"}
		return fmt.Sprintf("@every %d%s", r.Intn(200), units[r.Intn(len(units))])
	}
	fields := []string{
		randomField(r, 0, 59, nil),
		randomField(r, 0, 23, nil),
		randomField(r, 1, 31, nil),
		randomField(r, 1, 12, months),
		randomField(r, 0, 6, days),
	}
	// Mostly sparse schedules: a field often pinned, so that Next has work to do.
	return strings.Join(fields, " ")
}

func main() {
	zone := os.Getenv("TZ")
	r := rand.New(rand.NewSource(20261128))
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	// Instants: around the local zone's DST transitions of 2026 and 2027, and random ones.
	transitions := []time.Time{}
	for y := 2026; y <= 2027; y++ {
		prev := time.Date(y, 1, 1, 0, 0, 0, 0, time.Local)
		_, off := prev.Zone()
		for t := prev; t.Year() == y; t = t.Add(15 * time.Minute) {
			if _, o := t.Zone(); o != off {
				transitions = append(transitions, t)
				off = o
			}
		}
	}
	instant := func() time.Time {
		if len(transitions) > 0 && r.Intn(2) == 0 {
			tr := transitions[r.Intn(len(transitions))]
			return tr.Add(time.Duration(r.Int63n(int64(6*time.Hour))) - 3*time.Hour).Add(time.Duration(r.Intn(1e9)))
		}
		return time.Unix(1767225600+r.Int63n(5*365*86400), int64(r.Intn(1e9))).In(time.Local)
	}
	emit := func(spec string, at time.Time) {
		res := result{Zone: zone, Spec: spec, At: at.UTC().Format(time.RFC3339Nano)}
		sched, err := cron.ParseStandard(spec)
		if err != nil {
			res.Err = err.Error()
		} else {
			t := at
			for i := 0; i < 3; i++ {
				t = sched.Next(t)
				res.Next = append(res.Next, t.UTC().Format(time.RFC3339Nano))
				if t.IsZero() {
					break
				}
			}
		}
		if err := enc.Encode(res); err != nil {
			panic(err)
		}
	}
	for _, spec := range handPicked {
		for i := 0; i < 4; i++ {
			emit(spec, instant())
		}
	}
	for i := 0; i < 1500; i++ {
		spec := randomSpec(r)
		emit(spec, instant())
	}
}
