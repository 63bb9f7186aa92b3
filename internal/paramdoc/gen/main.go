// Command gen writes the parameter docs of the package in the current
// directory (paramdoc.GenFile: a ParamDocs method on each of its
// parameter structs), or removes the file when the package has none. Each
// such package names it in a //go:generate line of that file, so go
// generate ./... (or go generate in one package's folder) refreshes them.
package main

import (
	"errors"
	"fmt"
	"github.com/msgsim/msgsim/internal/gomod"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/msgsim/msgsim/internal/paramdoc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "paramdoc gen:", err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	root := dir
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(root)
		if up == root {
			return errors.New("no go.mod above " + dir)
		}
		root = up
	}
	mod, err := gomod.ModulePath(root)
	if err != nil {
		return err
	}
	pkg, err := paramdoc.ExtractPackage(root, mod, dir)
	if err != nil {
		return err
	}
	src := paramdoc.Source(pkg)
	if src == nil {
		if err := os.Remove(paramdoc.GenFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return os.WriteFile(paramdoc.GenFile, src, 0o644)
}
