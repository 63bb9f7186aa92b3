// Package inputfile reads the files a user hands to msgsim (scenarios,
// litmus tests, CPU models, traces, calibration files, results
// directories' JSON) with a bound: a file larger than the cap is refused
// before more than the cap is read, and anything that is not a regular
// file (a device such as /dev/zero, a FIFO, a socket, a directory, or a
// symbolic link to one of them) is refused without being opened, with its
// path named. Every refusal is an *Error: bad input, never a crash.
//
// Layer: the standard library only; any package of the module may use it.
package inputfile

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// DefaultMaxBytes is the cap when none is given: 16 MB. The largest
// built-in scenario is about 30 KB and a herd7 litmus file a few hundred
// bytes; a YAML file of 16 MB already decodes into a few hundred MB of
// nodes, so a larger cap is for traces and calibration data that need it
// (FlagName raises it).
const DefaultMaxBytes int64 = 16 << 20

// FlagName is the command-line flag that sets the cap, in MB.
const FlagName = "max-input-mb"

// Error is a refused input file.
type Error struct {
	Path string // the path as given
	Msg  string // why it is refused and what to do
	Err  error  // the underlying error, if any
}

func (e *Error) Error() string { return e.Path + ": " + e.Msg }

// Unwrap returns the underlying error (a *fs.PathError, ...).
func (e *Error) Unwrap() error { return e.Err }

// Read returns the contents of the regular file path, refusing a file
// larger than maxBytes (0: DefaultMaxBytes; negative: no cap) and any
// path that is not a regular file. It never opens a device or a FIFO, so
// it never blocks on one.
func Read(path string, maxBytes int64) ([]byte, error) {
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	if err := Check(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Path: path, Msg: openMsg(err), Err: err}
	}
	defer f.Close()
	// The file may have been replaced since Check: look again at what
	// was opened.
	st, err := f.Stat()
	if err != nil {
		return nil, &Error{Path: path, Msg: err.Error(), Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode(), "")
	}
	if maxBytes > 0 && st.Size() > maxBytes {
		return nil, tooLarge(path, st.Size(), maxBytes)
	}
	r := io.Reader(f)
	if maxBytes > 0 {
		// A file that grows while read (or a /proc file whose size is 0)
		// is still cut at the cap.
		r = io.LimitReader(f, maxBytes+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &Error{Path: path, Msg: err.Error(), Err: err}
	}
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return nil, tooLarge(path, -1, maxBytes)
	}
	return data, nil
}

// Check refuses path unless it names a regular file (through symbolic
// links), without opening it. A missing file is an *Error wrapping
// fs.ErrNotExist.
func Check(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return &Error{Path: path, Msg: openMsg(err), Err: err}
	}
	if st.Mode().IsRegular() {
		return nil
	}
	via := ""
	if l, err := os.Lstat(path); err == nil && l.Mode()&fs.ModeSymlink != 0 {
		if t, err := filepath.EvalSymlinks(path); err == nil {
			via = t
		}
	}
	return notRegular(path, st.Mode(), via)
}

// CheckDir refuses path unless it names a directory (through symbolic
// links).
func CheckDir(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return &Error{Path: path, Msg: openMsg(err), Err: err}
	}
	if !st.IsDir() {
		return &Error{Path: path, Msg: "not a directory (" + kind(st.Mode()) + ")"}
	}
	return nil
}

func openMsg(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func notRegular(path string, m fs.FileMode, via string) error {
	msg := "not a regular file (" + kind(m)
	if via != "" && via != path {
		msg += ", through the symbolic link to " + via
	}
	msg += "); give a file"
	if m.IsDir() {
		msg += ", not a directory"
	}
	return &Error{Path: path, Msg: msg}
}

// kind names a file mode's type.
func kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

func tooLarge(path string, size, maxBytes int64) error {
	what := "more than"
	if size >= 0 {
		what = strconv.FormatInt(size, 10) + " bytes,"
		return &Error{Path: path, Msg: fmt.Sprintf("%s more than the input limit of %s (--%s raises it)", what, mb(maxBytes), FlagName)}
	}
	return &Error{Path: path, Msg: fmt.Sprintf("%s the input limit of %s (--%s raises it)", what, mb(maxBytes), FlagName)}
}

func mb(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Flag defines --max-input-mb on fs and returns the cap it sets, in
// bytes, to pass to Read (valid after fs.Parse; Value refuses a cap that
// is not a positive number of MB).
func Flag(fs *flag.FlagSet) *int64 {
	v := &capValue{bytes: DefaultMaxBytes}
	fs.Var(v, FlagName, "refuse an input file (scenario, litmus test, model, trace, calibration or results file) larger than `MB` megabytes")
	return &v.bytes
}

// capValue is the flag's value: MB given, bytes kept.
type capValue struct{ bytes int64 }

func (c *capValue) String() string {
	if c == nil {
		return ""
	}
	return strconv.FormatInt(c.bytes>>20, 10)
}

func (c *capValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > 1<<20 {
		return fmt.Errorf("want a whole number of MB from 1 to %d, got %q", 1<<20, s)
	}
	c.bytes = n << 20
	return nil
}

// FromFlags is the cap that Flag defined on fs holds (after fs.Parse), or
// DefaultMaxBytes when fs has no such flag.
func FromFlags(fs *flag.FlagSet) int64 {
	if f := fs.Lookup(FlagName); f != nil {
		if c, ok := f.Value.(*capValue); ok {
			return c.bytes
		}
	}
	return DefaultMaxBytes
}
