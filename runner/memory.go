package runner

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// DefaultMaxMemory is the most memory a series' set-up may take when the
// caller gives no limit: three quarters of the memory this machine has
// available now (MemAvailable of /proc/meminfo), leaving the rest to the
// run's messages and to the other series of -j; 8 GB where that cannot
// be read.
func DefaultMaxMemory() float64 {
	if b, ok := availableMemory(); ok {
		return 0.75 * b
	}
	return 8e9
}

// availableMemory reads MemAvailable from /proc/meminfo, in bytes.
func availableMemory() (float64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 2 && f[1] == "kB" {
			if kb, err := strconv.ParseFloat(f[0], 64); err == nil && kb > 0 {
				return kb * 1024, true
			}
		}
	}
	return 0, false
}
