package cronfederatedhpa

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Parsed here because no cron library is among the module's dependencies.

// Schedule is a parsed cron expression: for each field, the set of values
// it matches, as a bit set.
type Schedule struct {
	Minute, Hour, DayOfMonth, Month, DayOfWeek uint64
}

// cronField describes one of the five fields.
type cronField struct {
	name     string
	min, max int
	// names are the words accepted for values, from min on (JAN, SUN, ...).
	names []string
}

var cronFields = [5]cronField{
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day of month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{name: "day of week", min: 0, max: 6, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

// macros are the shorthands a CronJob's schedule accepts.
var macros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// ParseSchedule parses a standard cron expression: minute, hour, day of
// month, month and day of week, each a comma-separated list of *, a value
// or a range a-b, optionally with a /step; months and days of week may be
// written as three-letter names; ? stands for * in the day fields. The
// macros @yearly, @annually, @monthly, @weekly, @daily, @midnight and
// @hourly are accepted too. A time zone belongs in the rule's timeZone, not
// in the schedule.
func ParseSchedule(spec string) (Schedule, error) {
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return Schedule{}, errors.New("a time zone is not allowed in the schedule, set timeZone instead")
	}
	if strings.HasPrefix(spec, "@") {
		expanded, ok := macros[strings.ToLower(spec)]
		if !ok {
			return Schedule{}, fmt.Errorf("unknown shorthand %q", spec)
		}
		spec = expanded
	}
	words := strings.Fields(spec)
	if len(words) != len(cronFields) {
		return Schedule{}, fmt.Errorf("expected 5 fields (minute hour day-of-month month day-of-week), found %d", len(words))
	}
	var sets [5]uint64
	for i, word := range words {
		set, err := cronFields[i].parse(word, i >= 2 && i != 3)
		if err != nil {
			return Schedule{}, fmt.Errorf("%s: %w", cronFields[i].name, err)
		}
		sets[i] = set
	}
	return Schedule{Minute: sets[0], Hour: sets[1], DayOfMonth: sets[2], Month: sets[3], DayOfWeek: sets[4]}, nil
}

// parse reads one field; question marks it as a day field, where ? is *.
func (f cronField) parse(word string, question bool) (uint64, error) {
	var set uint64
	for _, item := range strings.Split(word, ",") {
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("invalid step %q", stepText)
			}
			step = n
		}
		var lo, hi int
		switch {
		case rng == "*" || (question && rng == "?"):
			lo, hi = f.min, f.max
		default:
			first, last, isRange := strings.Cut(rng, "-")
			var err error
			if lo, err = f.value(first); err != nil {
				return 0, err
			}
			hi = lo
			switch {
			case isRange:
				if hi, err = f.value(last); err != nil {
					return 0, err
				}
				if hi < lo {
					return 0, fmt.Errorf("range %q ends before it starts", rng)
				}
			case hasStep:
				// a/step runs from a to the end of the field.
				hi = f.max
			}
		}
		for v := lo; v <= hi; v += step {
			set |= 1 << uint(v)
		}
	}
	return set, nil
}

// value reads one number or name within the field's bounds.
func (f cronField) value(text string) (int, error) {
	for i, name := range f.names {
		if strings.EqualFold(text, name) {
			return f.min + i, nil
		}
	}
	n, err := strconv.Atoi(text)
	if err != nil {
		return 0, fmt.Errorf("invalid value %q", text)
	}
	if n < f.min || n > f.max {
		return 0, fmt.Errorf("value %d out of range %d-%d", n, f.min, f.max)
	}
	return n, nil
}
