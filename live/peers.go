package live

// JobVertex is a vertex of a job as a link to its page needs it.
type JobVertex struct {
	ID, Name     string
	Kafka, Keyed bool
	Parallelism  int
}

// JobVertices lists a job's vertices in the job's order, without building
// any view; nil when the job is not known.
func (s *State) JobVertices(endpoint, jobID string) []JobVertex {
	_, j := s.findJob(endpoint, jobID)
	if j == nil {
		return nil
	}
	out := make([]JobVertex, len(j.Vertices))
	for i, v := range j.Vertices {
		out[i] = JobVertex{ID: v.ID, Name: v.Name, Kafka: v.Kafka != nil, Keyed: v.Keyed, Parallelism: v.Parallelism}
	}
	return out
}
