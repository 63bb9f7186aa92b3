package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// Document is the content of results.json: the scenario that was run (any
// value, marshalled as given), its seed, the results, the reference points,
// their comparison, the paper's claims evaluated, and the failures and notes of the run.
type Document struct {
	Scenario    any           `json:"scenario"`
	Seed        uint64        `json:"seed"`
	Rows        []Row         `json:"rows"`
	References  []Reference   `json:"references"`
	Comparisons []Comparison  `json:"comparisons"`
	Claims      []ClaimResult `json:"claims"`
	Failures    []string      `json:"failures"`
	Notes       []string      `json:"notes"`
}

// WriteJSON writes doc as indented JSON followed by a newline. Nil slices
// are written as empty arrays. It fails on NaN or infinite values, which
// JSON cannot represent.
func WriteJSON(w io.Writer, doc Document) error {
	doc.Rows = nonNil(doc.Rows)
	doc.References = nonNil(doc.References)
	doc.Comparisons = nonNil(doc.Comparisons)
	doc.Claims = nonNil(doc.Claims)
	doc.Failures = nonNil(doc.Failures)
	doc.Notes = nonNil(doc.Notes)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("report: encoding results JSON: %w", err)
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("report: writing results JSON: %w", err)
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
