package jobs

import (
	"context"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// JobList lists every job, oldest first, through River's public API.
func (c *Client) JobList(ctx context.Context) ([]*rivertype.JobRow, error) {
	params := river.NewJobListParams().First(1000)
	var (
		res *river.JobListResult
		err error
	)
	if c.lite != nil {
		res, err = c.lite.JobList(ctx, params)
	} else {
		res, err = c.pg.JobList(ctx, params)
	}
	if err != nil {
		return nil, err
	}
	return res.Jobs, nil
}
