// Command gen writes internal/paramdoc/docs_gen.go: the doc comment of
// every parameter struct field under paramdoc.Dirs. Run it with go
// generate ./internal/paramdoc from the module root.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/msgsim/msgsim/internal/paramdoc"
)

func main() {
	// go generate runs in the package's directory: the module root is two
	// levels up.
	root := filepath.Join("..", "..")
	docs, err := paramdoc.Extract(root, "github.com/msgsim/msgsim", paramdoc.Dirs)
	if err == nil {
		err = os.WriteFile("docs_gen.go", paramdoc.Source(docs), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "paramdoc gen:", err)
		os.Exit(1)
	}
}
