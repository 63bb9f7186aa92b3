package inputfile

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	os.WriteFile(small, []byte("name: x\n"), 0o644)
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, make([]byte, 2<<20), 0o644)
	link := filepath.Join(dir, "zero.yaml")
	os.Symlink("/dev/zero", link)
	fifo := filepath.Join(dir, "fifo.yaml")
	fifoErr := syscall.Mkfifo(fifo, 0o644)
	for _, c := range []struct {
		path string
		max  int64
		want string // "" ok, else a fragment of the error
	}{
		{small, 0, ""},
		{big, 1 << 20, "2097152 bytes, more than the input limit of 1 MB (--max-input-mb raises it)"},
		{big, 3 << 20, ""},
		{"/dev/zero", 0, "/dev/zero: not a regular file (a character device)"},
		{link, 0, "a character device, through the symbolic link to /dev/zero"},
		{fifo, 0, "not a regular file (a FIFO)"},
		{dir, 0, "a directory); give a file, not a directory"},
		{filepath.Join(dir, "none.yaml"), 0, "none.yaml: no such file or directory"},
	} {
		if c.path == fifo && fifoErr != nil {
			continue
		}
		data, err := Read(c.path, c.max)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Read(%s): %v", c.path, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Read(%s) = %d bytes, %v; want an error with %q", c.path, len(data), err, c.want)
		case c.want != "":
			var ie *Error
			if !errors.As(err, &ie) {
				t.Errorf("Read(%s): %T, want *Error", c.path, err)
			}
		}
	}
	if _, err := Read(filepath.Join(dir, "none"), 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist wrapped", err)
	}
}

func TestFlag(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	if got := FromFlags(fs); got != DefaultMaxBytes {
		t.Errorf("no flag: %d, want the default", got)
	}
	p := Flag(fs)
	for _, bad := range []string{"0", "-1", "NaN", "1.5", "x", "9999999999"} {
		if err := fs.Set(FlagName, bad); err == nil {
			t.Errorf("--%s %s accepted", FlagName, bad)
		}
	}
	if err := fs.Set(FlagName, "3"); err != nil || *p != 3<<20 || FromFlags(fs) != 3<<20 {
		t.Errorf("--%s 3: %v, %d", FlagName, err, *p)
	}
}
