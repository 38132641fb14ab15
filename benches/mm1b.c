/* mm1b.c: a minimal hand-written heap-based discrete-event simulation of an M/M/1/B queue.
 *
 * Reference point for irqlab's benchmarks: the kind of tight C loop a researcher would write.
 * Arrivals and departures both go through a binary min-heap of (time, seq, kind) events.
 * B is the capacity including the packet in service; an arrival finding B packets is dropped.
 * Service mean 1.0, arrival rate LOAD; exponential times by inversion from xoshiro256++.
 *
 * Build: gcc -O2 -o benches/build/mm1b benches/mm1b.c -lm
 * Usage: mm1b N_PACKETS LOAD B SEED   (prints one line of JSON)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct { double t; uint64_t seq; int kind; } event;  /* kind: 0 arrival, 1 departure */
enum { ARRIVAL = 0, DEPARTURE = 1 };

static event heap[8]; /* at most one pending arrival and one pending departure */
static int heap_n;
static uint64_t next_seq, rng[4];

static int before(const event *a, const event *b) {
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void push(double t, int kind) {
    int i = heap_n++;
    event e = {t, next_seq++, kind};
    while (i > 0 && before(&e, &heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = e;
}

static event pop(void) {
    event top = heap[0], last = heap[--heap_n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= heap_n) break;
        if (c + 1 < heap_n && before(&heap[c + 1], &heap[c])) c++;
        if (!before(&heap[c], &last)) break;
        heap[i] = heap[c];
        i = c;
    }
    heap[i] = last;
    return top;
}

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t xoshiro256pp(void) {
    uint64_t r = rotl(rng[0] + rng[3], 23) + rng[0], t = rng[1] << 17;
    rng[2] ^= rng[0];
    rng[3] ^= rng[1];
    rng[1] ^= rng[2];
    rng[0] ^= rng[3];
    rng[2] ^= t;
    rng[3] = rotl(rng[3], 45);
    return r;
}

static inline double expo(double mean) {
    double u = (double)(xoshiro256pp() >> 11) * 0x1.0p-53; /* [0, 1) */
    return -log(1.0 - u) * mean;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s N_PACKETS LOAD B SEED\n", argv[0]);
        return 2;
    }
    uint64_t n = strtoull(argv[1], NULL, 10), seed = strtoull(argv[4], NULL, 10);
    double load = atof(argv[2]);
    long b = atol(argv[3]);
    if (n == 0 || !(load > 0) || b < 1) {
        fprintf(stderr, "need N_PACKETS >= 1, LOAD > 0, B >= 1\n");
        return 2;
    }
    for (int i = 0; i < 4; i++) rng[i] = splitmix64(&seed);
    double *arr = malloc((size_t)b * sizeof *arr); /* FIFO of arrival times in the system */
    if (!arr) return 1;
    long head = 0, in_sys = 0;
    uint64_t offered = 0, delivered = 0, dropped = 0;
    double lat_sum = 0.0, amean = 1.0 / load;

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    push(expo(amean), ARRIVAL);
    while (heap_n > 0) {
        event e = pop();
        if (e.kind == ARRIVAL) {
            offered++;
            if (offered < n) push(e.t + expo(amean), ARRIVAL);
            if (in_sys == b) {
                dropped++;
            } else {
                arr[(head + in_sys) % b] = e.t;
                if (in_sys++ == 0) push(e.t + expo(1.0), DEPARTURE);
            }
        } else {
            lat_sum += e.t - arr[head];
            head = (head + 1) % b;
            delivered++;
            if (--in_sys > 0) push(e.t + expo(1.0), DEPARTURE);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);

    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("{\"offered\": %llu, \"delivered\": %llu, \"dropped\": %llu, \"mean_latency\": %.9g, "
           "\"wall_seconds\": %.6f, \"packets_per_second\": %.6g}\n",
           (unsigned long long)offered, (unsigned long long)delivered,
           (unsigned long long)dropped, delivered ? lat_sum / (double)delivered : 0.0, wall,
           wall > 0 ? (double)offered / wall : 0.0);
    free(arr);
    return 0;
}
