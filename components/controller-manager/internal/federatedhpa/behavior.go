package federatedhpa

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
)

// The HPA's limit on a scale up when no behavior is set: at most double, or
// 4 replicas, whichever is more, per sync.
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

// Kubernetes' reasons of the AbleToScale and ScalingLimited conditions set
// while normalising a recommendation.
const (
	ReasonReadyForNewScale    = "ReadyForNewScale"
	ReasonScaleUpStabilized   = "ScaleUpStabilized"
	ReasonScaleDownStabilized = "ScaleDownStabilized"
	ReasonScaleUpLimit        = "ScaleUpLimit"
	ReasonScaleDownLimit      = "ScaleDownLimit"
	ReasonTooManyReplicas     = "TooManyReplicas"
	ReasonTooFewReplicas      = "TooFewReplicas"
	ReasonDesiredWithinRange  = "DesiredWithinRange"
)

// recommendation is a replica count the metrics asked for, before
// stabilisation, and when.
type recommendation struct {
	replicas int32
	at       time.Time
}

// scaleEvent is a change made to the target: positive up, negative down.
type scaleEvent struct {
	change   int32
	at       time.Time
	outdated bool
}

// limit is a normalised count and why it is what it is.
type limit struct {
	replicas        int32
	reason, message string
}

// record stores desired among recs at now, reusing the slot of a
// recommendation older than both windows, so the list stays as short as
// the windows need.
func record(recs []recommendation, desired int32, now time.Time, oldest time.Time) []recommendation {
	for i := range recs {
		if recs[i].at.Before(oldest) {
			recs[i] = recommendation{desired, now}
			return recs
		}
	}
	return append(recs, recommendation{desired, now})
}

// stabilizeDown is the HPA's stabilisation without behavior: the highest
// recommendation of the last window, so that a dip does not scale down.
func stabilizeDown(recs []recommendation, desired int32, window time.Duration, now time.Time) (int32, []recommendation) {
	cutoff := now.Add(-window)
	out := desired
	for _, r := range recs {
		if !r.at.Before(cutoff) {
			out = max(out, r.replicas)
		}
	}
	return out, record(recs, desired, now, cutoff)
}

// stabilize is the HPA's stabilisation with behavior: not above the lowest
// recommendation of the scale-up window, nor below the highest of the
// scale-down window, nor past current in either direction.
func stabilize(recs []recommendation, desired, current int32, upWindow, downWindow time.Duration, now time.Time) (limit, []recommendation) {
	upCutoff, downCutoff := now.Add(-upWindow), now.Add(-downWindow)
	up, down := desired, desired
	for _, r := range recs {
		if r.at.After(upCutoff) {
			up = min(up, r.replicas)
		}
		if r.at.After(downCutoff) {
			down = max(down, r.replicas)
		}
	}
	out := max(current, up)
	out = min(out, down)
	oldest := upCutoff
	if downCutoff.Before(oldest) {
		oldest = downCutoff
	}
	l := limit{replicas: out, reason: ReasonScaleUpStabilized,
		message: "recent recommendations were lower than current one, applying the lowest recent recommendation"}
	if desired < current {
		l.reason, l.message = ReasonScaleDownStabilized, "recent recommendations were higher than current one, applying the highest recent recommendation"
	}
	return l, record(recs, desired, now, oldest)
}

// limitWithoutBehavior bounds desired by min, max and the HPA's fixed
// scale-up rate.
func limitWithoutBehavior(current, desired, minReplicas, maxReplicas int32) limit {
	upLimit := int32(math.Max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum))
	most := limit{maxReplicas, ReasonTooManyReplicas, "the desired replica count is more than the maximum replica count"}
	if maxReplicas > upLimit {
		most = limit{upLimit, ReasonScaleUpLimit, "the desired replica count is increasing faster than the maximum scale rate"}
	}
	switch {
	case desired < minReplicas:
		return limit{minReplicas, ReasonTooFewReplicas, "the desired replica count is less than the minimum replica count"}
	case desired > most.replicas:
		return most
	}
	return limit{desired, ReasonDesiredWithinRange, "the desired count is within the acceptable range"}
}

// changeInPeriod sums the changes of the last period.
func changeInPeriod(events []scaleEvent, period time.Duration, now time.Time) int32 {
	cutoff := now.Add(-period)
	var sum int32
	for _, e := range events {
		if e.at.After(cutoff) {
			sum += e.change
		}
	}
	return sum
}

// scaleUpLimit is the most replicas the policies of rules allow now: each
// policy counts from the replicas at the start of its period.
func scaleUpLimit(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	return policyLimit(current, ups, downs, rules, now, 1)
}

// scaleDownLimit is the fewest replicas the policies of rules allow now.
func scaleDownLimit(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	return policyLimit(current, ups, downs, rules, now, -1)
}

// policyLimit is the replica count the policies of rules allow now in
// direction (1 up, -1 down). Max picks the biggest change, the highest
// count up and the lowest down; Min the smallest.
func policyLimit(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time, direction int32) int32 {
	sel := ptr.Deref(rules.SelectPolicy, autoscalingv2.MaxChangePolicySelect)
	if sel == autoscalingv2.DisabledPolicySelect {
		return current
	}
	biggest := sel != autoscalingv2.MinChangePolicySelect
	result, pick := int32(math.MinInt32), func(a, b int32) int32 { return max(a, b) }
	if biggest != (direction > 0) {
		result, pick = math.MaxInt32, func(a, b int32) int32 { return min(a, b) }
	}
	for _, p := range rules.Policies {
		period := time.Duration(p.PeriodSeconds) * time.Second
		start := current - changeInPeriod(ups, period, now) - changeInPeriod(downs, period, now)
		var proposed int32
		switch {
		case p.Type == autoscalingv2.PodsScalingPolicy:
			proposed = start + direction*p.Value
		case p.Type == autoscalingv2.PercentScalingPolicy && direction > 0:
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		case p.Type == autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

// limitWithBehavior bounds desired by min, max and the rate the policies
// of behavior allow.
func limitWithBehavior(current, desired, minReplicas, maxReplicas int32, ups, downs []scaleEvent, b *autoscalingv2.HorizontalPodAutoscalerBehavior, now time.Time) limit {
	switch {
	case desired > current:
		upTo := max(scaleUpLimit(current, ups, downs, b.ScaleUp, now), current)
		most := limit{maxReplicas, ReasonTooManyReplicas, "the desired replica count is more than the maximum replica count"}
		if maxReplicas > upTo {
			most = limit{upTo, ReasonScaleUpLimit, "the desired replica count is increasing faster than the maximum scale rate"}
		}
		if desired > most.replicas {
			return most
		}
	case desired < current:
		downTo := min(scaleDownLimit(current, ups, downs, b.ScaleDown, now), current)
		least := limit{minReplicas, ReasonTooFewReplicas, "the desired replica count is less than the minimum replica count"}
		if minReplicas < downTo {
			least = limit{downTo, ReasonScaleDownLimit, "the desired replica count is decreasing faster than the maximum scale rate"}
		}
		if desired < least.replicas {
			return least
		}
	}
	return limit{desired, ReasonDesiredWithinRange, "the desired count is within the acceptable range"}
}

// longestPeriod is the longest period of the rules' policies.
func longestPeriod(rules *autoscalingv2.HPAScalingRules) time.Duration {
	var longest int32
	if rules != nil {
		for _, p := range rules.Policies {
			longest = max(longest, p.PeriodSeconds)
		}
	}
	return time.Duration(longest) * time.Second
}

// recordEvent stores a change, reusing the slot of one older than every
// policy period.
func recordEvent(events []scaleEvent, change int32, longest time.Duration, now time.Time) []scaleEvent {
	cutoff := now.Add(-longest)
	for i := range events {
		if events[i].at.Before(cutoff) {
			events[i].outdated = true
		}
	}
	for i := range events {
		if events[i].outdated {
			events[i] = scaleEvent{change: change, at: now}
			return events
		}
	}
	return append(events, scaleEvent{change: change, at: now})
}
