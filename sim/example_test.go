package sim_test

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
)

// Two simulated processes share one engine: a producer works for 3 us and
// hands a value over, a consumer waits for it in a wait queue. Run runs
// them, one at a time, in simulated time order, until none can go on.
func Example() {
	eng := sim.NewEngine(1) // the seed of the engine's random generator
	var ready sim.WaitQueue
	value := 0
	eng.Spawn("consumer", func(p *sim.Proc) {
		for value == 0 {
			ready.Wait(p, "waiting for the producer's value")
		}
		fmt.Printf("%v: consumer got %d\n", eng.Now(), value)
		p.Sleep(500 * sim.Nanosecond) // the cost of using it
		fmt.Printf("%v: consumer done\n", eng.Now())
	})
	eng.Spawn("producer", func(p *sim.Proc) {
		p.Sleep(3 * sim.Microsecond) // the cost of computing it
		value = 42
		fmt.Printf("%v: producer sets %d\n", eng.Now(), value)
		ready.WakeOne()
	})
	if err := eng.Run(); err != nil {
		fmt.Println("run:", err)
		return
	}
	fmt.Printf("all done at %v\n", eng.Now())
	// Output:
	// 3us: producer sets 42
	// 3us: consumer got 42
	// 3.5us: consumer done
	// all done at 3.5us
}
