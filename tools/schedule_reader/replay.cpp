// replay.cpp: replays a paver schedule on a toy GPU, the way a cycle-level simulator's CTA
// issue would use paver_schedule.hpp (docs/SCHEDULE.md). The toy: the schedule's N SMs with
// x TB contexts each; every TB runs for CYCLES cycles; each cycle, first the TBs that are
// done leave, then every SM in id order with a free context asks paver::Issuer for one TB
// (one TB per SM per cycle, as GPGPU-Sim's issue_block2core). Prints one line per issue,
// "cycle sm tb bx by bz", then "done: T TBs in C cycles".
//
//   g++ -std=c++17 -O2 -Wall -Wextra -o replay tools/schedule_reader/replay.cpp
//   ./replay schedule.json [CYCLES]
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "paver_schedule.hpp"

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s schedule.json [cycles per TB]\n", argv[0]);
    return 2;
  }
  long run_cycles = argc > 2 ? std::atol(argv[2]) : 3;
  if (run_cycles < 1) run_cycles = 1;
  paver::Schedule s;
  try {
    s = paver::read_schedule_file(argv[1]);
  } catch (const paver::Error &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  paver::Issuer issuer(s);
  // Per SM: the cycles at which its running TBs finish.
  std::vector<std::vector<long>> running(s.num_sms);
  std::uint64_t issued = 0;
  long cycle = 0;
  while (issued < s.num_tbs()) {
    for (auto &r : running) {
      std::vector<long> still;
      for (long end : r)
        if (end > cycle) still.push_back(end);
      r.swap(still);
    }
    for (std::uint32_t sm = 0; sm < s.num_sms; ++sm) {
      // This is where a simulator's issue_block2core asks for the TB to launch.
      if (running[sm].size() >= s.tbs_per_sm || !issuer.has_work(sm)) continue;
      long tb = issuer.next_tb(sm);
      if (tb < 0) continue;
      std::uint32_t xyz[3];
      paver::tb_coords(s, std::uint32_t(tb), xyz);
      std::printf("%ld %u %ld %u %u %u\n", cycle, sm, tb, xyz[0], xyz[1], xyz[2]);
      running[sm].push_back(cycle + run_cycles);
      ++issued;
    }
    ++cycle;
  }
  std::printf("done: %llu TBs in %ld cycles\n", (unsigned long long)issued, cycle);
  return 0;
}
