package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion: --version prints the build information's version: a
// module version, else the VCS revision (and whether it was modified).
func TestVersion(t *testing.T) {
	for _, c := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: "github.com/msgsim/msgsim", Version: "v1.2.0"}},
			"simrun github.com/msgsim/msgsim v1.2.0 (go1.26)"},
		{&debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: "github.com/msgsim/msgsim", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "47e1f83aaaaaaaaaaaa"}, {Key: "vcs.time", Value: "2026-11-28T20:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"simrun github.com/msgsim/msgsim 47e1f83aaaaa 2026-11-28T20:00:00Z +dirty (go1.26)"},
		{nil, "simrun (no build information)"},
	} {
		if got := version(c.info, c.info != nil); got != c.want {
			t.Errorf("version = %q, want %q", got, c.want)
		}
	}
	for _, arg := range []string{"--version", "-version", "version"} {
		code, out, _ := simrun(t, arg)
		if code != exitOK || !strings.HasPrefix(out, "simrun ") {
			t.Errorf("simrun %s: exit %d, %q", arg, code, out)
		}
	}
}
