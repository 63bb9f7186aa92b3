package collective

// tableMetric is a case's metric in the table workload (Table 2's columns).
func tableMetric(kind string) string {
	switch kind {
	case "bcast", "reduce":
		return kind + "_s"
	}
	return kind + "_MBps"
}

// cases are the cases a workload runs: raw one-sided communication has
// no broadcast or reduce here.
func cases(kind string, oneSided bool) []string {
	if kind != "table" {
		return []string{kind}
	}
	if oneSided {
		return []string{"alltoall", "alltoone", "onetoall"}
	}
	return []string{"alltoall", "alltoone", "onetoall", "bcast", "reduce"}
}
