package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// version is simrun's version from the build information the Go
// toolchain records: the module's version (a tag, or a pseudo-version
// when installed with go install), else the VCS revision and time of the
// checkout it was built from ("+dirty" for uncommitted changes), else
// "(devel)"; and the Go version.
func version(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "simrun (no build information)"
	}
	v := info.Main.Version
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" && (v == "" || v == "(devel)") {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v = rev
		if t := settings["vcs.time"]; t != "" {
			v += " " + t
		}
		if settings["vcs.modified"] == "true" {
			v += " +dirty"
		}
	}
	if v == "" {
		v = "(devel)"
	}
	return fmt.Sprintf("simrun %s %s (%s)", info.Main.Path, v, info.GoVersion)
}

func printVersion(stdout io.Writer) int {
	info, ok := debug.ReadBuildInfo()
	fmt.Fprintln(stdout, version(info, ok))
	return exitOK
}
