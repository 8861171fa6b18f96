package core

import (
	"math/bits"
	"slices"
	"strings"
)

// maxWeight caps a single weight so that sums of up to a million weights
// and products with a replica count stay exact in 64/128-bit arithmetic.
const maxWeight = int64(1) << 40

// share is one cluster's part in a proportional division.
type share struct {
	name   string
	weight int64
	// prev is what the cluster had before: the starting point of a steady
	// division and a tie-breaker (keep replicas where they are).
	prev int64
	// result is the division's answer.
	result int64

	// floor and rem are floor(n*weight/sum) and its remainder.
	floor int64
	rem   uint64
}

// quotas fills floor and rem for dividing n by weight, and returns the
// weight sum. Exact: the product is 128-bit.
func quotas(n int64, shares []share) uint64 {
	var sum uint64
	for i := range shares {
		shares[i].weight = min(max(shares[i].weight, 0), maxWeight)
		sum += uint64(shares[i].weight)
	}
	if sum == 0 {
		return 0
	}
	for i := range shares {
		hi, lo := bits.Mul64(uint64(n), uint64(shares[i].weight))
		q, r := bits.Div64(hi, lo, sum) // q <= n since weight <= sum, so no overflow
		shares[i].floor, shares[i].rem = int64(q), r
	}
	return sum
}

// gainsFirst orders who gets a leftover replica: the largest fractional
// part, then the heavier weight, then who had more, then the name, so the
// outcome is deterministic.
func gainsFirst(a, b *share) int {
	if a.rem != b.rem {
		if a.rem > b.rem {
			return -1
		}
		return 1
	}
	if a.weight != b.weight {
		if a.weight > b.weight {
			return -1
		}
		return 1
	}
	if a.prev != b.prev {
		if a.prev > b.prev {
			return -1
		}
		return 1
	}
	return strings.Compare(a.name, b.name)
}

// divide splits n in proportion to the weights by largest remainder
// (Hamilton): every share ends within one replica of its exact quota, and
// ties go by gainsFirst. Shares of weight 0 get nothing; with no weight at
// all nothing is assigned.
func divide(n int64, shares []share) {
	if quotas(n, shares) == 0 {
		for i := range shares {
			shares[i].result = 0
		}
		return
	}
	left := n
	for i := range shares {
		shares[i].result = shares[i].floor
		left -= shares[i].floor
	}
	if left <= 0 {
		return
	}
	order := make([]*share, 0, len(shares))
	for i := range shares {
		if shares[i].rem > 0 {
			order = append(order, &shares[i])
		}
	}
	for _, s := range firstK(order, int(left), gainsFirst) {
		s.result++
	}
}

// firstK returns the k first items of the order cmp defines. Few replicas
// spread over many clusters leave few remainders to hand out, so a bounded
// insertion beats sorting every share.
func firstK(items []*share, k int, cmp func(a, b *share) int) []*share {
	if k <= 0 {
		return nil
	}
	if k >= len(items) {
		return items
	}
	if k > 16 && k*8 > len(items) {
		slices.SortFunc(items, cmp)
		return items[:k]
	}
	top := make([]*share, 0, k+1)
	for _, it := range items {
		if len(top) == k && cmp(it, top[k-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, it, cmp)
		top = slices.Insert(top, i, it)
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}

// divideSteady divides n like divide but starting from prev, moving the
// fewest replicas: on scale-up shares only grow, on scale-down they only
// shrink, and every share still ends within one replica of its quota. It
// reports false when prev is too far from the quotas for that (weights or
// clusters changed); the caller then divides afresh.
func divideSteady(n int64, shares []share) bool {
	if quotas(n, shares) == 0 {
		return false
	}
	var prevSum int64
	for i := range shares {
		prevSum += shares[i].prev
	}
	ceil := func(s *share) int64 {
		if s.rem > 0 {
			return s.floor + 1
		}
		return s.floor
	}
	var sum int64
	if prevSum <= n {
		for i := range shares {
			s := &shares[i]
			if s.prev > ceil(s) {
				return false
			}
			s.result = max(s.prev, s.floor)
			sum += s.result
		}
		if sum > n {
			return false
		}
		order := make([]*share, 0, len(shares))
		for i := range shares {
			if s := &shares[i]; s.result < ceil(s) {
				order = append(order, s)
			}
		}
		for _, s := range firstK(order, int(n-sum), gainsFirst) {
			s.result++
		}
		return true
	}
	for i := range shares {
		s := &shares[i]
		if s.prev < s.floor {
			return false
		}
		s.result = min(s.prev, ceil(s))
		sum += s.result
	}
	if sum < n {
		return false
	}
	order := make([]*share, 0, len(shares))
	for i := range shares {
		if s := &shares[i]; s.result > s.floor {
			order = append(order, s)
		}
	}
	// Whoever would gain last loses first.
	for _, s := range firstK(order, int(sum-n), func(a, b *share) int { return gainsFirst(b, a) }) {
		s.result--
	}
	return true
}
