package rig;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import feign.Client;
import feign.FeignException;
import feign.Retryer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClient;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.openfeign.EnableFeignClients;
import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.cloud.openfeign.FeignClientFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;
import org.springframework.web.bind.annotation.GetMapping;

/**
 * OpenFeign caller (2025.1.4): every period-ms, on a pool thread, one call of
 * {@code @FeignClient("svc") String ping()} (GET /ping), as an application of that train calls a
 * service. Spring Cloud LoadBalancer chooses the instance (FeignBlockingLoadBalancerClient ->
 * BlockingLoadBalancerClient, round robin over the Eureka client's instances, Caffeine cache);
 * spring-retry is NOT on the classpath, so there is no RetryableFeignBlockingLoadBalancerClient
 * and Feign's own Retryer is Spring Cloud's default Retryer.NEVER_RETRY: one attempt per call.
 * Feign's timeouts are its defaults (connect 10 s, read 60 s). The HTTP client under Feign is
 * feign's Client.Default (HttpURLConnection; logged at start) with http.keepAlive=false: a new
 * TCP connection per request.
 *
 * Chosen instance: a LoadBalancerLifecycle bean (spring-cloud-commons) gets onStartRequest with
 * the load balancer's Response<ServiceInstance> from FeignBlockingLoadBalancerClient#execute on
 * the calling thread, just before the HTTP request; it keeps the instance in a ThreadLocal.
 */
@SpringBootApplication
@EnableFeignClients
public class FeignCallerApp implements ApplicationRunner {
    private static final Logger log = LoggerFactory.getLogger(FeignCallerApp.class);
    /** The instance the load balancer chose for the current call on this thread. */
    static final ThreadLocal<String> CHOSEN = new ThreadLocal<>();

    @FeignClient("svc")
    interface SvcClient {
        @GetMapping("/ping")
        String ping();
    }

    private final ApplicationContext ctx;
    private final SvcClient svc;

    @Value("${caller.log-file:caller.csv}") String logFile;
    @Value("${caller.period-ms:50}") long periodMs;
    @Value("${caller.pool-size:64}") int poolSize;

    private RigLog out;

    public FeignCallerApp(ApplicationContext ctx, SvcClient svc) {
        this.ctx = ctx;
        this.svc = svc;
    }

    public static void main(String[] args) {
        // No persistent connections: every request opens a new TCP connection.
        System.setProperty("http.keepAlive", "false");
        SpringApplication.run(FeignCallerApp.class, args);
    }

    @Bean
    LoadBalancerLifecycle<Object, Object, ServiceInstance> noteChosenInstance() {
        return new LoadBalancerLifecycle<>() {
            @Override
            public void onStart(Request<Object> request) {
            }

            @Override
            public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
                if (lbResponse != null && lbResponse.hasServer()) {
                    CHOSEN.set(lbResponse.getServer().getInstanceId());
                }
            }

            @Override
            public void onComplete(CompletionContext<Object, ServiceInstance, Object> completionContext) {
            }
        };
    }

    @Override
    public void run(ApplicationArguments args) throws Exception {
        FeignClientFactory f = ctx.getBean(FeignClientFactory.class);
        Client client = f.getInstance("svc", Client.class);
        Object delegate = null;
        try {
            delegate = client.getClass().getMethod("getDelegate").invoke(client);
        } catch (ReflectiveOperationException e) {
            delegate = "n/a";
        }
        Retryer retryer = f.getInstance("svc", Retryer.class);
        log.info("RIG feign client={} delegate={} retryer={} LoadBalancerClient={} spring-retry present={} "
                        + "spring.cloud.loadbalancer.retry.enabled={} lbCacheManager={}",
                client.getClass().getName(), delegate == null ? "null" : delegate.getClass().getName(),
                retryer == null ? "null" : (retryer == Retryer.NEVER_RETRY ? "Retryer.NEVER_RETRY" : retryer.getClass().getName()),
                ctx.getBean(LoadBalancerClient.class).getClass().getName(),
                ClassUtils.isPresent("org.springframework.retry.support.RetryTemplate", null),
                ctx.getEnvironment().getProperty("spring.cloud.loadbalancer.retry.enabled"),
                ctx.getBeanNamesForType(org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager.class).length == 0
                        ? "NONE" : ctx.getBean(org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager.class).getClass().getName());
        ExecutorService pool = Executors.newFixedThreadPool(poolSize, r -> {
            Thread t = new Thread(r, "rig-req");
            t.setDaemon(true);
            return t;
        });
        ScheduledExecutorService sched = Executors.newScheduledThreadPool(2);
        out = new RigLog(logFile, sched);
        sched.scheduleAtFixedRate(() -> pool.execute(this::oneRequest), 0, periodMs, TimeUnit.MILLISECONDS);
        log.info("RIG caller started: period={}ms log={}", periodMs, logFile);
    }

    private void oneRequest() {
        long send = System.currentTimeMillis();
        long t0 = System.nanoTime();
        CHOSEN.remove();
        String outcome;
        try {
            svc.ping();
            outcome = "ok";
        } catch (FeignException e) {
            if (e.status() > 0) {
                // FeignBlockingLoadBalancerClient answers 503 itself when no instance is available
                outcome = e.status() == 503 && CHOSEN.get() == null ? "no_instance" : "http_" + e.status();
            } else {
                outcome = RigLog.failure(e);
            }
        } catch (Throwable e) {
            outcome = RigLog.failure(e);
        }
        String chosen = CHOSEN.get();
        CHOSEN.remove();
        long lat = (System.nanoTime() - t0) / 1_000_000L;
        out.write(send, chosen, outcome, lat);
    }
}
