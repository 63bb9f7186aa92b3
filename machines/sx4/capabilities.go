package sx4

// MemoryBytes is the memory one process can allocate: the node's main
// memory (node_memory_mb), which its processes share (machines.Memory).
func (m *Machine) MemoryBytes() int { return m.params.NodeMemoryMB << 20 }
