package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
)

// hostileFiles are the scenario files of the hostile-input corpus
// (scenarios/testdata/hostile, also the seeds of the scenario parser's
// fuzz target): simrun validate FILE must exit as said, with the
// fragment in its output.
var hostileFiles = map[string]struct {
	exit int
	want string
}{
	"alias-at-use":             {2, "through the alias *p here; its anchor &p is at line 6, column 11, the value in error at line 6, column 28"},
	"alias-bomb":               {2, `unknown field "a"`},
	"alias-cycle-params":       {2, "field machine.params.name"},
	"bad-indent":               {2, "4: malformed YAML: did not find expected key"},
	"binary":                   {2, "malformed YAML: control characters are not allowed"},
	"bom":                      {0, "ok (1 series"},
	"claim-bad-kind":           {2, "field claims[0]"},
	"claim-empty":              {2, `missing required field "name"`},
	"control-chars-name":       {2, "use letters, digits"},
	"cost-nan":                 {2, "field cost.wall_seconds: must be a finite number"},
	"deep-mapping":             {2, `unknown field "a"`},
	"deep-nesting":             {2, "field workload"},
	"description-long":         {2, "20001 characters long"},
	"duplicate-key":            {2, `duplicate key "name"`},
	"duplicate-nested":         {2, `field machine.name: duplicate key "name"`},
	"empty":                    {2, `missing required field "name"`},
	"events-too-many":          {2, "field workload.params.repetitions: series x would take about"},
	"expect-bad":               {2, `"explosion" is not a failure kind`},
	"explore-bound-huge":       {2, "bound must be 0 to 6"},
	"explore-schedule-bad":     {2, "a schedule is the digits and letters"},
	"figure-abs":               {2, "must be a relative path inside the output directory"},
	"figure-bad-scale":         {2, `"cubic" is not a scale`},
	"figure-dotdot":            {2, "must be a relative path inside the output directory"},
	"figure-dup":               {2, "is already written by figures[0]"},
	"figure-empty-file":        {2, "field figures[0].file: must not be empty"},
	"figure-empty-metric":      {2, "panels[0].metric: must not be empty"},
	"figure-ext":               {2, "extension must be .png, .svg or .pdf"},
	"figure-log-negative":      {2, "must be positive on a log x axis"},
	"figure-unknown-series":    {2, `unknown series "nope"`},
	"figure-xmax-lt-xmin":      {2, "must be greater than x_min"},
	"figure-xmin-nan":          {2, "must be finite numbers"},
	"float-seed":               {2, "field seed: expected a non-negative integer"},
	"huge-int-seed":            {2, "field seed: expected an integer from 0 to"},
	"limits-events-negative":   {2, "field limits.max_events: expected a non-negative integer"},
	"limits-negative":          {2, "field limits.max_sim_time_us: must be a finite number"},
	"list-doc":                 {2, "expected a mapping (name: value lines), got a list"},
	"litmus-dev-zero":          {2, "litmus file /dev/zero.litmus"},
	"litmus-file-missing":      {2, "field workload.params.test: litmus file nope.litmus"},
	"litmus-model-dev-zero":    {2, "/dev/zero: not a regular file (a character device)"},
	"litmus-runs-huge":         {2, "field workload.params.runs: series x would take about 3.0e+14 events"},
	"machine-list":             {2, "field machine: expected a mapping"},
	"machine-param-bool":       {2, `expected a number, got "true"`},
	"machine-param-huge":       {2, "outside the plausible range"},
	"machine-param-inf":        {2, "must be a finite number, got +Inf"},
	"machine-param-nan":        {2, "must be a finite number, got NaN"},
	"machine-param-negative":   {2, "-1 us is outside the plausible range"},
	"machine-param-string":     {2, `expected a number, got "fast"`},
	"machine-param-unknown":    {2, `did you mean "semop_us"?`},
	"many-errors":              {2, "too many errors"},
	"many-series":              {2, "too many errors"},
	"name-empty":               {2, "field name: must not be empty"},
	"name-list":                {2, "field name: expected a string, got a list"},
	"name-long":                {2, "300 characters long; at most 100"},
	"name-missing":             {2, `missing required field "name"`},
	"name-newline":             {2, "use letters, digits"},
	"name-slash":               {2, `"../../etc/passwd": use letters, digits`},
	"negative-seed":            {2, "field seed: expected a non-negative integer, got -1"},
	"not-utf8":                 {2, "malformed YAML: invalid leading UTF-8 octet"},
	"null-doc":                 {2, "field name"},
	"only-comment":             {2, `missing required field "name"`},
	"pairing-missing-verb":     {2, "aclmpl cannot run on machine challenge: it needs remote-write"},
	"params-list":              {2, "expected a mapping of parameter names to values"},
	"params-no-name":           {2, "params are given but no name"},
	"params-scalar":            {2, "expected a mapping of parameter names to values"},
	"reference-empty-metric":   {2, "field references[0].metric: must not be empty"},
	"reference-nan":            {2, "field references[0].x: must be a finite number"},
	"reference-system-clash":   {2, "a reference of another system"},
	"reference-unknown-series": {2, `unknown series "nope"`},
	"scalar-doc":               {2, `expected a mapping (name: value lines), got "hello"`},
	"sci-crc-0.5-big":          {0, "warning: series x: the machine's faults make scampi retry each transfer about"},
	"sci-crc-above-range":      {2, "outside the plausible range [0, 0.5]"},
	"sci-procs-huge":           {2, ":4:51: field workload.params.procs: 100000 processes at procs_per_node 1 need 100000 nodes"},
	"exchange-procs-huge":      {2, ":4:44: field workload.params.procs: procs must be between 2 and 64"},
	"series-bad-machine":       {2, `field series[0].machine.name: unknown machine "cray9"`},
	"series-dup":               {2, `series "a" is already defined`},
	"series-empty-name":        {2, "field series[0].name: must not be empty"},
	"series-no-name":           {2, `field series[0].name: missing required field "name"`},
	"series-not-list":          {2, "field series: expected a list, got a mapping"},
	"series-param-type":        {2, `field series[0].machine.params.cache_kb: expected an integer, got "abc"`},
	"series-unknown-field":     {2, `unknown field "colour"`},
	"stack-device-bad":         {2, `got "ch_p4"`},
	"stack-eager-negative":     {2, "field stack.params.eager_bytes"},
	"stack-param-unknown":      {2, `did you mean "device"?`},
	"string-seed":              {2, `expected a non-negative integer, got "abc"`},
	"t3d-million-pes":          {2, ":6:21: field workload.params.pes[1]: 1000000 PEs cannot run on this machine: t3d: 1000000 PEs requested"},
	"t3d-mpi-million-4096":     {2, ":10:17: field workload.params.pes: series x: setting up 1000000 processes takes about 120 TB of memory"},
	"tabs":                     {2, "found a tab character"},
	"title-long":               {2, "300 characters long; at most 200"},
	"title-multiline":          {2, "must be one line"},
	"two-docs":                 {2, "a second YAML document"},
	"unclosed-flow":            {2, "did not find expected ',' or '}'"},
	"unclosed-list":            {2, "did not find expected ',' or ']'"},
	"unclosed-quote":           {2, "malformed YAML"},
	"unknown-anchor":           {2, `unknown anchor "nope"`},
	"unknown-machine":          {2, `unknown machine "cray9"`},
	"unknown-stack":            {2, `unknown stack "lam"`},
	"unknown-top":              {2, `did you mean "machine"?`},
	"unknown-workload":         {2, `did you mean "pingpong"?`},
	"very-long-line":           {2, "100000 characters long"},
	"workload-missing":         {2, `missing required field "workload"`},
	"workload-name-int":        {2, `unknown workload "5"`},
	"workload-param-unknown":   {2, `did you mean "sizes"?`},
	"workload-ranks-huge":      {2, "field workload.params.ranks: 100000000 ranks cannot run on this machine"},
	"workload-reps-huge":       {2, "field workload.params.repetitions: series x would take about 1.0e+24 events"},
	"workload-reps-negative":   {2, "repetitions must be at least 1, got -5"},
	"workload-sizes-huge":      {2, "does not fit rank 0's memory"},
	"workload-sizes-negative":  {2, "sizes[1] is negative (-3)"},
	"workload-sizes-string":    {2, `field workload.params.sizes: expected a list, got "big"`},
	"yaml-bad-directive":       {2, "found unknown directive name"},
	"yaml-complex-key":         {2, "field name"},
	"yaml-directive":           {0, "ok (1 series"},
	"yaml-merge-key":           {2, `unknown field "base"`},
	"yaml-tag-binary":          {2, "use letters, digits"},
}

// hostileLitmus are the litmus files of the corpus
// (litmus/testdata/hostile, also seeds of the litmus parser's
// fuzz target): simrun litmus FILE --model tso --runs 10.
var hostileLitmus = map[string]struct {
	exit int
	want string
}{
	"arch-unknown":    {2, `:1:1: architecture "ARM64" is not supported (X86, C)`},
	"bad-register":    {0, "Observation T"},
	"c-unclosed":      {2, ":3:1: P0: '{' is not closed by '}'"},
	"c-unknown-macro": {2, `:3:14: unsupported statement "FROB(*x, 1)"`},
	"deep-cond":       {2, "condition nested too deeply"},
	"empty":           {2, ":1:1: empty file"},
	"garbage":         {2, "is not supported (X86, C)"},
	"huge-value":      {2, `:2:5: value "99999999999999999999999": want a non-negative integer`},
	"long-name":       {0, "Observation NNNN"},
	"many-threads":    {2, "too many threads (at most 8)"},
	"no-exists":       {2, "missing the final condition"},
	"nul-in-name":     {0, "Observation T"},
	"thread-mismatch": {2, "program row has 1 column(s), the header 2"},
	"unbalanced":      {2, `want ")", got "end of file"`},
	"unknown-instr":   {2, `unsupported instruction "FROB"`},
}

// hostileCommand is a command of the corpus: args with {h} the corpus
// directory, {f} the directory of the fixtures made by hostileFixtures
// {out} the case's output directory (the only place it may write) and
// {nowrite} a path outside it, which a refused command must not create.
type hostileCommand struct {
	args string
	exit int
	want string
}

var hostileCommands = []hostileCommand{
	// Files that are not regular, or too large.
	{"validate /dev/zero", 2, "/dev/zero: not a regular file (a character device)"},
	{"validate {f}/z.yaml", 2, "not a regular file (a character device, through the symbolic link to /dev/zero)"},
	{"validate {f}/fifo.yaml", 2, "not a regular file (a FIFO)"},
	{"validate {f}/dir.yaml", 2, "not a regular file (a directory)"},
	{"validate {f}/big.yaml --max-input-mb 1", 2, "more than the input limit of 1 MB (--max-input-mb raises it)"},
	{"validate {f}/none.yaml", 2, "no such file or directory"},
	{"run /dev/zero --out {out}", 2, "not a regular file"},
	{"run {f}/z.yaml --out {out}", 2, "symbolic link to /dev/zero"},
	{"run {f}/fifo.yaml --out {out}", 2, "a FIFO"},
	{"trace {f}/z.yaml --out {out}/t.json", 2, "symbolic link to /dev/zero"},
	{"explore {f}/z.yaml --out {out}", 2, "symbolic link to /dev/zero"},
	{"litmus {f}/z.litmus", 2, "litmus file " + "{f}/z.litmus: not a regular file (a character device, through the symbolic link to /dev/zero)"},
	{"litmus {f}/fifo.litmus", 2, "a FIFO"},
	{"litmus {f}/big.litmus --max-input-mb 1", 2, "more than the input limit of 1 MB"},
	{"litmus {f}/empty.litmus", 2, "litmus"},
	{"litmus {f}/garbage.litmus", 2, "litmus"},
	{"litmus SB --model /dev/zero", 2, "--model: model \"/dev/zero\" is neither a built-in model"},
	{"litmus SB --model {f}/z.yaml", 2, "symbolic link to /dev/zero"},
	{"litmus SB --model {f}/badmodel.yaml", 2, "unknown field"},
	{"report /dev/zero", 2, "not a directory"},
	{"report {f}/results-zero", 2, "results.json: not a regular file"},
	{"report {f}/results-garbage", 2, "results.json"},
	{"report {f}/none", 2, "run simrun run first"},
	{"merge /dev/zero", 2, "/dev/zero: not a regular file"},
	{"merge {f}/garbage.json", 2, "garbage.json: invalid character"},
	{"merge {f}/none", 2, "no such file or directory"},
	{"validate {h}/sci-crc-0.5-big.yaml --max-input-mb 0", 2, "invalid value \"0\" for flag -max-input-mb"},
	{"validate {h}/sci-crc-0.5-big.yaml --max-input-mb abc", 2, "want a whole number of MB"},
	// Flags checked at parse time, naming the flag.
	{"run litmus-mp -j 0 --out {out}", 2, `invalid value "0" for flag -j: want at least 1`},
	{"run litmus-mp -j -3 --out {out}", 2, `invalid value "-3" for flag -j`},
	{"run litmus-mp -j x --out {out}", 2, `invalid value "x" for flag -j`},
	{"suite -j 0 --out {out}", 2, `invalid value "0" for flag -j`},
	{"run litmus-mp --max-events NaN --out {out}", 2, `invalid value "NaN" for flag -max-events`},
	{"run litmus-mp --max-events -3 --out {out}", 2, `invalid value "-3" for flag -max-events`},
	{"run litmus-mp --max-events 0 --out {out}", 2, `invalid value "0" for flag -max-events`},
	{"run litmus-mp --max-events +Inf --out {out}", 2, `invalid value "+Inf" for flag -max-events`},
	{"validate litmus-mp --max-events -1", 0, "ok"},
	{"validate litmus-mp --max-events 1e3", 2, "more than the limit of 1e+03"},
	{"validate litmus-mp --max-memory 0", 2, `invalid value "0" for flag -max-memory`},
	{"validate litmus-mp --max-memory NaN", 2, `invalid value "NaN" for flag -max-memory`},
	{"validate litmus-mp --max-memory -2", 2, `invalid value "-2" for flag -max-memory`},
	{"validate {h}/t3d-mpi-million-4096.yaml --max-memory 1", 2, "more than the limit of 1 GB: at most"},
	{"run sci-pingpong --shard 5/2 --out {nowrite}", 2, "--shard"},
	{"run sci-pingpong --shard 0/0 --out {nowrite}", 2, "--shard"},
	{"run sci-pingpong --shard x --out {nowrite}", 2, "--shard"},
	{"run sci-pingpong --shard 5/2 --cpuprofile {nowrite}.prof", 2, "--shard"},
	{"run litmus-mp --seed -1 --out {out}", 2, "invalid value \"-1\" for flag -seed"},
	{"run litmus-mp --bogus --out {out}", 2, "flag provided but not defined: -bogus"},
	{"run", 2, "expected 1 argument(s), got 0"},
	{"run a b", 2, "expected 1 argument(s), got 2"},
	{"frobnicate", 2, `unknown command "frobnicate"`},
	{"help frobnicate", 2, `no command "frobnicate"`},
	{"show nope", 2, "no built-in scenario nope"},
	{"show ../../etc/passwd", 2, "no built-in scenario"},
	{"validate nope", 2, `scenario "nope": no such file and no such built-in scenario`},
	{"params nope", 2, "nope"},
	{"soak --runs 0", 2, `invalid value "0" for flag -runs`},
	{"soak --only ( --runs 1", 2, "--only"},
	{"bench -n 0", 2, `invalid value "0" for flag -n`},
	{"suite ( --out {out}", 2, "("},
	{"claims ( --fast", 2, "("},
	{"explore threads-fig3 --series naive-lock --schedule 999999999 --out {out} --quiet", 2, "schedule choice 1 is '9' (alternative 10), but that choice point offers 2 alternatives ('0' to '1')"},
	{"explore threads-fig3 --series naive-lock --schedule 0000000000000000000000000000000000000000000000000000000000000000000000001 --out {out} --quiet", 2, "but the run made only"},
	{"explore threads-fig3 --series naive-lock --schedule {long} --out {out} --quiet", 2, "--schedule: 100000 characters; a schedule has at most 10000 choices"},
	{"explore threads-fig3 --series naive-lock --schedule A! --out {out} --quiet", 2, "a schedule is the digits and letters 0-9a-z"},
	{"explore threads-fig3 --schedule 0 --out {out} --quiet", 2, "name it with --series"},
	{"explore threads-fig3 --series nope --out {out} --quiet", 2, "--series nope: scenario threads-fig3 has no such series"},
	{"explore litmus-mp --out {out} --quiet", 2, "not explore"},
	{"litmus SB --runs 1000000000000", 2, "--runs 1000000000000 would take about 3.0e+14 events"},
	{"litmus SB --runs 0", 2, `invalid value "0" for flag -runs`},
	{"litmus SB --runs -5", 2, `invalid value "-5" for flag -runs`},
	{"litmus SB --runs 1e3", 2, `invalid value "1e3" for flag -runs`},
	{"litmus SB --model tso --runs 2000 --max-events 1000", 2, "more than the limit of 1e+03"},
	{"litmus NOPE --model tso", 2, "NOPE"},
	{"litmus SB --model nope", 2, `model "nope" is neither a built-in model`},
	{"litmus SB --machine nope", 2, `unknown machine "nope"`},
	{"litmus SB --model tso --place P0=1", 2, "--place"},
	{"litmus SB --model tso --machine t3d", 2, "give one"},
	{"litmus SB --model tso --runs 200 --seed 3", 0, "Observation SB"},
	{"report {f}/results-ok --out {out}/r.html", 0, "1 scenario(s)"},
	{"report {f}/results-ok-abs --out {relout}/rel.html", 0, "1 scenario(s)"},
	{"report {f}/results-ok --out {relout}/sub/rel.html", 0, "1 scenario(s)"},
	// Faults: a livelock named within the limits, never the watchdog.
	{"run {f}/crc4.yaml --out {out} --quiet -j 1", 1, "rank0 retried its write of a data chunk to rank 1 (checkpointed, Figure 1.2's loop)"},
	{"validate {h}/sci-crc-0.5-big.yaml", 0, "completion is unlikely"},
}

// hostileFixtures makes the files the commands use in dir: links to
// /dev/zero, FIFOs, a directory named like a file, files over the cap,
// results directories good and bad, a small faulty scenario.
func hostileFixtures(t *testing.T, dir string) {
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, data string) {
		must(os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		must(os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	must(os.Symlink("/dev/zero", filepath.Join(dir, "z.yaml")))
	must(os.Symlink("/dev/zero", filepath.Join(dir, "z.litmus")))
	for _, f := range []string{"fifo.yaml", "fifo.litmus"} {
		if err := syscall.Mkfifo(filepath.Join(dir, f), 0o644); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
	}
	must(os.Mkdir(filepath.Join(dir, "dir.yaml"), 0o755))
	big := strings.Repeat("# padding\n", 150_000) // 1.5 MB
	write("big.yaml", big)
	write("big.litmus", big)
	write("empty.litmus", "")
	write("garbage.litmus", "\x00\x01 not a litmus test {{{\n")
	write("badmodel.yaml", "base: tso\nstore_bufer: {order: reordered}\n")
	write("garbage.json", "{not json")
	must(os.MkdirAll(filepath.Join(dir, "results-zero"), 0o755))
	must(os.Symlink("/dev/zero", filepath.Join(dir, "results-zero", "results.json")))
	write("results-garbage/results.json", "[[[")
	ok := `{"scenario": {"name": "x", "title": "t"}, "seed": 1, "rows": []}`
	write("results-ok/x/results.json", ok)
	write("crc4.yaml", "name: crc4\nmachine: {name: sci, params: {crc_error_rate: 0.5}}\nstack: {name: scampi}\nworkload: {name: random-messages, params: {procs: [2], messages: 4}}\n")
	abs, err := filepath.Abs(filepath.Join(dir, "results-ok"))
	must(err)
	must(os.Symlink(abs, filepath.Join(dir, "results-ok-abs")))
}

// TestHostileInputs runs the hostile-input corpus: every bad file and
// command exits as expected (2 for bad input, never a panic or a runtime
// crash) with its message, and writes nothing outside its --out.
func TestHostileInputs(t *testing.T) {
	corpus, err := filepath.Abs("../../scenarios/testdata/hostile")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var cases []hostileCommand
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".yaml")
		seen[name] = true
		h, ok := hostileFiles[name]
		if !ok {
			t.Errorf("corpus file %s has no entry in hostileFiles", e.Name())
			continue
		}
		cases = append(cases, hostileCommand{"validate {h}/" + e.Name(), h.exit, h.want})
	}
	for name := range hostileFiles {
		if !seen[name] {
			t.Errorf("hostileFiles names %s, which is not in %s", name, corpus)
		}
	}
	lcorpus, err := filepath.Abs("../../litmus/testdata/hostile")
	if err != nil {
		t.Fatal(err)
	}
	lentries, err := os.ReadDir(lcorpus)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range lentries {
		name := strings.TrimSuffix(e.Name(), ".litmus")
		h, ok := hostileLitmus[name]
		if !ok {
			t.Errorf("litmus corpus file %s has no entry in hostileLitmus", e.Name())
			continue
		}
		cases = append(cases, hostileCommand{"litmus " + filepath.Join(lcorpus, e.Name()) + " --model tso --runs 10", h.exit, h.want})
	}
	if len(lentries) != len(hostileLitmus) {
		t.Errorf("%d litmus corpus files, %d entries in hostileLitmus", len(lentries), len(hostileLitmus))
	}
	cases = append(cases, hostileCommands...)
	work := t.TempDir()
	fixtures := filepath.Join(work, "fixtures")
	if err := os.Mkdir(fixtures, 0o755); err != nil {
		t.Fatal(err)
	}
	hostileFixtures(t, fixtures)
	t.Chdir(work) // a default output directory (results/...) would land here
	long := strings.Repeat("0", 100_000)
	for i, c := range cases {
		out := filepath.Join(work, fmt.Sprintf("out%03d", i))
		r := strings.NewReplacer("{h}", corpus, "{f}", fixtures, "{out}", out, "{relout}", filepath.Base(out), "{nowrite}", filepath.Join(work, "never-written"), "{long}", long)
		args := strings.Fields(r.Replace(c.args))
		want := r.Replace(c.want)
		name := c.args
		if len(name) > 80 {
			name = name[:80]
		}
		t.Run(name, func(t *testing.T) {
			before := listTree(t, work)
			code, stdout, stderr := hostileRun(t, args)
			all := stdout + stderr
			if code != c.exit {
				t.Errorf("exit %d, want %d\n%s", code, c.exit, firstLines(all, 6))
			}
			if !strings.Contains(all, want) {
				t.Errorf("output lacks %q:\n%s", want, firstLines(all, 6))
			}
			for _, bad := range []string{"panic", "goroutine ", "fatal error", "runtime error"} {
				if strings.Contains(all, bad) {
					t.Errorf("output has %q:\n%s", bad, firstLines(all, 20))
				}
			}
			for p := range listTree(t, work) {
				if !before[p] && p != out && !strings.HasPrefix(p, out+string(filepath.Separator)) {
					t.Errorf("wrote %s, outside its --out %s", p, out)
				}
			}
		})
	}
	// Memory taken from the system by the whole corpus (the test binary's
	// own included): no input may make simrun grow near a gigabyte.
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.Sys > 1<<30 {
		t.Errorf("the corpus took %d MB from the system; want under 1 GB", m.Sys>>20)
	}
}

// hostileRun runs the CLI in-process, turning a panic into a failure
// with its stack.
func hostileRun(t *testing.T, args []string) (code int, stdout, stderr string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("simrun %s panicked: %v\n%s", strings.Join(args, " "), r, debug.Stack())
			code = -1
		}
	}()
	return simrun(t, args...)
}

// listTree lists every path below dir (fixtures excluded: a FIFO is never
// opened).
func listTree(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			out[p] = true
		}
		return nil
	})
	return out
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	for i, l := range lines {
		if len(l) > 300 {
			lines[i] = l[:300] + "..."
		}
	}
	return strings.Join(lines, "\n")
}
